//! Renders the cluster's Cilium manifest by running `helm template` as EKS Anywhere runs it: the
//! command line, values and environment come from [`capi_render::cilium::helm_template`]; this
//! module runs the program with a time limit and an output limit, feeds the values on stdin, and
//! returns the manifest (with EKS Anywhere's allow-all NetworkPolicies appended when policy
//! enforcement is `always`).
//!
//! When the spec's registry mirror authenticates, `helm registry login <mirror> --username <user>
//! --password-stdin --insecure` runs first: the password goes only to helm's stdin, never into an
//! argument, an error or `Debug`. `helm template` is tried up to [`HelmOptions::attempts`] times
//! (EKS Anywhere tries 10 times, 5 s apart: the chart pull crosses the network).
//!
//! The functions block (they wait for a child process); async callers run them on a blocking
//! thread (`tokio::task::spawn_blocking`).

use crate::process::{FailureKind, Run, Stdin};
use capi_render::{RenderError, cilium::HelmTemplate};
use snow_api::{ValidSpec, release::ClusterRelease};
use snow_credentials::RegistryCredentials;
use std::{path::PathBuf, thread, time::Duration};

/// How much of helm's stderr an error keeps (its end, where helm says what failed).
pub const STDERR_TAIL_BYTES: usize = crate::process::STDERR_TAIL;

/// How to run helm.
#[derive(Debug, Clone)]
pub struct HelmOptions {
    /// The helm program: a path, or a name looked up on `PATH` (default `helm`).
    pub helm: PathBuf,
    /// The time limit of each helm run (default 10 minutes); past it helm is killed.
    pub timeout: Duration,
    /// The most bytes of manifest accepted (default 64 MiB).
    pub max_output: usize,
    /// How many times a failing `helm template` is tried (default 10, as EKS Anywhere).
    pub attempts: u32,
    /// The pause between tries (default 5 s, as EKS Anywhere).
    pub retry_delay: Duration,
    /// The registry mirror login, needed when the spec's mirror has `authenticate: true`.
    pub login: Option<RegistryCredentials>,
}

impl Default for HelmOptions {
    fn default() -> Self {
        HelmOptions {
            helm: PathBuf::from("helm"),
            timeout: Duration::from_secs(600),
            max_output: 64 << 20,
            attempts: 10,
            retry_delay: Duration::from_secs(5),
            login: None,
        }
    }
}

/// Why the manifest could not be rendered with helm.
#[derive(Debug, thiserror::Error)]
pub enum HelmError {
    /// The helm program is not there.
    #[error(
        "helm was not found (`{}`): install helm 3 and put it on PATH",
        path.display()
    )]
    NotFound {
        /// The program looked for.
        path: PathBuf,
    },
    /// The program could not be started.
    #[error("could not run `{}`: {message}", path.display())]
    Spawn {
        /// The program.
        path: PathBuf,
        /// The system's reason.
        message: String,
    },
    /// The mirror authenticates but no login was given.
    #[error("the registry mirror {registry} requires authentication, and no login was given")]
    LoginMissing {
        /// The mirror (`host:port`).
        registry: String,
    },
    /// helm exited with a failure.
    #[error("`helm {command}` failed ({status}): {stderr}")]
    Failed {
        /// The subcommand and its main argument (`template oci://…`, `registry login …`).
        command: String,
        /// The exit status.
        status: String,
        /// The end of helm's stderr (the mirror password blanked out).
        stderr: String,
    },
    /// helm did not finish in time.
    #[error("`helm {command}` did not finish within {} s and was stopped", timeout.as_secs())]
    TimedOut {
        /// The subcommand.
        command: String,
        /// The limit.
        timeout: Duration,
    },
    /// helm printed more than the limit.
    #[error("`helm {command}` printed more than {limit} bytes; it was stopped")]
    TooLarge {
        /// The subcommand.
        command: String,
        /// The limit.
        limit: usize,
    },
    /// helm printed something that is not UTF-8 text.
    #[error("`helm {command}` printed output that is not UTF-8 text")]
    NotText {
        /// The subcommand.
        command: String,
    },
    /// The release lacks what the command needs (the bundle's `cilium` section).
    #[error(transparent)]
    Render(#[from] RenderError),
    /// The bundle's chart is not among the chart files given ([`super::CniSource::HelmChartFiles`]).
    #[error(
        "the Helm chart {chart} (Kubernetes {kubernetes}) is not among the Cilium charts taken from {from}: give the controller an archive downloaded for this Kubernetes version"
    )]
    ChartNotTaken {
        /// The bundle's `cilium.helmChart` URI.
        chart: String,
        /// The bundle's Kubernetes version.
        kubernetes: String,
        /// Where the charts came from (the archive).
        from: String,
    },
}

/// The cluster's Cilium manifest, rendered by helm: logs in to the mirror when it authenticates,
/// runs `helm template` (retrying as [`HelmOptions`] says) and appends EKS Anywhere's extra
/// objects.
pub fn render(
    spec: &ValidSpec,
    release: &ClusterRelease<'_>,
    opts: &HelmOptions,
) -> Result<String, HelmError> {
    let template = capi_render::cilium::helm_template(spec, release)?;
    render_template(&template, opts)
}

/// [`render`] with the chart read from the file `chart` (its `.tgz`, e.g. taken from an offline
/// archive) instead of pulled from the registry: nothing is read from the network, and no
/// registry login runs.
pub fn render_chart_file(
    spec: &ValidSpec,
    release: &ClusterRelease<'_>,
    chart: &std::path::Path,
    opts: &HelmOptions,
) -> Result<String, HelmError> {
    let template = capi_render::cilium::helm_template(spec, release)?.with_chart_file(chart);
    render_template(&template, opts)
}

/// [`render_template`] on tokio's blocking pool, for async code: helm runs for up to
/// [`HelmOptions::timeout`], which must not hold a runtime worker. A panic in it is resumed here.
pub async fn spawn_render(template: HelmTemplate, opts: HelmOptions) -> Result<String, HelmError> {
    let helm = opts.helm.clone();
    match tokio::task::spawn_blocking(move || render_template(&template, &opts)).await {
        Ok(result) => result,
        Err(e) => match e.try_into_panic() {
            Ok(panic) => std::panic::resume_unwind(panic),
            Err(e) => Err(HelmError::Spawn {
                path: helm,
                message: e.to_string(),
            }),
        },
    }
}

/// [`render`] for an already computed invocation.
pub fn render_template(template: &HelmTemplate, opts: &HelmOptions) -> Result<String, HelmError> {
    if let Some(registry) = &template.login {
        let login = opts.login.as_ref().ok_or_else(|| HelmError::LoginMissing {
            registry: registry.clone(),
        })?;
        let args = template.login_args(login.username()).unwrap_or_default();
        run(opts, &args, &template.env, &Input::Password(login))?;
    }
    let args = template.args();
    let values = template.values_yaml();
    let mut tries = 0;
    let out = loop {
        tries += 1;
        match run(opts, &args, &template.env, &Input::Bytes(values.as_bytes())) {
            // A failure is tried again (a registry hiccup); a run that hit the time limit is not.
            Err(HelmError::Failed { .. }) if tries < opts.attempts => {
                thread::sleep(opts.retry_delay);
            }
            other => break other?,
        }
    };
    let mut manifest = String::from_utf8(out).map_err(|_| HelmError::NotText {
        command: label(&args),
    })?;
    if let Some(extra) = &template.append {
        capi_render::cilium::append_documents(&mut manifest, extra);
    }
    Ok(manifest)
}

/// What helm reads on stdin.
enum Input<'a> {
    Bytes(&'a [u8]),
    Password(&'a RegistryCredentials),
}

/// `template oci://…` or `registry login host:port`: what an error names (never a value).
fn label(args: &[String]) -> String {
    let n = if args.first().map(String::as_str) == Some("registry") {
        3
    } else {
        2
    };
    args.iter()
        .take(n)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs helm once through the crate's one runner ([`crate::process`]: the time and output
/// limits, helm killed past them); its stdout on success. The mirror password goes only to
/// helm's stdin and is blanked out of its stderr.
fn run(
    opts: &HelmOptions,
    args: &[String],
    env: &[(String, String)],
    input: &Input<'_>,
) -> Result<Vec<u8>, HelmError> {
    let command = label(args);
    let os_args: Vec<std::ffi::OsString> = args.iter().map(Into::into).collect();
    let write_password = |stdin: &mut std::process::ChildStdin| match input {
        Input::Password(login) => login.write_password(stdin),
        Input::Bytes(_) => Ok(()),
    };
    let redact = |text: &str| match input {
        Input::Password(login) => login.redact(text),
        Input::Bytes(_) => text.to_owned(),
    };
    let run = Run {
        program: &opts.helm,
        args: &os_args,
        env,
        stdin: match input {
            Input::Bytes(bytes) => Stdin::Bytes(bytes.to_vec()),
            Input::Password(_) => Stdin::Secret(&write_password),
        },
        timeout: opts.timeout,
        max_stdout: opts.max_output,
        redact: &redact,
    };
    let failure = match run.run() {
        Ok(out) => return Ok(out),
        Err(failure) => failure,
    };
    Err(match failure.kind {
        FailureKind::NotFound => HelmError::NotFound {
            path: opts.helm.clone(),
        },
        FailureKind::Spawn(message) => HelmError::Spawn {
            path: opts.helm.clone(),
            message,
        },
        FailureKind::TimedOut => HelmError::TimedOut {
            command,
            timeout: opts.timeout,
        },
        FailureKind::TooLarge => HelmError::TooLarge {
            command,
            limit: opts.max_output,
        },
        FailureKind::Status(status) => HelmError::Failed {
            command,
            status,
            stderr: match failure.stderr {
                stderr if stderr.is_empty() => "no message on stderr".into(),
                stderr => stderr,
            },
        },
    })
}
