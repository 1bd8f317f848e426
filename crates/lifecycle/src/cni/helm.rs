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

use capi_render::{RenderError, cilium::HelmTemplate};
use snow_api::{ValidSpec, release::ClusterRelease};
use snow_credentials::RegistryCredentials;
use std::{
    io::{self, Read, Write},
    path::PathBuf,
    process::{Child, Command, ExitStatus, Stdio},
    thread,
    time::{Duration, Instant},
};

/// How much of helm's stderr an error keeps (its end, where helm says what failed).
pub const STDERR_TAIL_BYTES: usize = 2048;

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
    /// The registry mirror login (`REGISTRY_USERNAME`/`REGISTRY_PASSWORD`), needed when the
    /// spec's mirror has `authenticate: true`.
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
    #[error(
        "the registry mirror {registry} requires authentication: set REGISTRY_USERNAME and REGISTRY_PASSWORD"
    )]
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

/// Runs helm once with a time limit and an output limit; its stdout on success.
fn run(
    opts: &HelmOptions,
    args: &[String],
    env: &[(String, String)],
    input: &Input<'_>,
) -> Result<Vec<u8>, HelmError> {
    let command = label(args);
    let mut child = Command::new(&opts.helm)
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => HelmError::NotFound {
                path: opts.helm.clone(),
            },
            _ => HelmError::Spawn {
                path: opts.helm.clone(),
                message: e.to_string(),
            },
        })?;
    let limit = opts.max_output;
    let stdout = child.stdout.take().map(|mut pipe| {
        thread::spawn(move || {
            // One byte past the limit tells "too large"; then the pipe closes and helm stops.
            let mut buf = Vec::new();
            let _ = (&mut pipe)
                .take(limit.saturating_add(1) as u64)
                .read_to_end(&mut buf);
            buf
        })
    });
    let stderr = child
        .stderr
        .take()
        .map(|pipe| thread::spawn(move || tail(pipe)));
    // A write error means helm exited without reading everything; its status says why.
    let _ = feed(&mut child, input);
    let Some(status) = wait(&mut child, opts.timeout) else {
        // The readers are left to finish on their own: a process helm started may still hold
        // the pipes open, and waiting for it would defeat the limit.
        return Err(HelmError::TimedOut {
            command,
            timeout: opts.timeout,
        });
    };
    let out = stdout.and_then(|t| t.join().ok()).unwrap_or_default();
    let err = stderr.and_then(|t| t.join().ok()).unwrap_or_default();
    if out.len() > limit {
        return Err(HelmError::TooLarge { command, limit });
    }
    if !status.success() {
        let mut stderr = String::from_utf8_lossy(&err).trim().to_owned();
        if let Input::Password(login) = input {
            stderr = login.redact(&stderr);
        }
        if stderr.is_empty() {
            stderr = "no message on stderr".into();
        }
        return Err(HelmError::Failed {
            command,
            status: describe(status),
            stderr,
        });
    }
    Ok(out)
}

/// Writes the input to helm's stdin and closes it. Values go from a thread (helm may print before
/// it has read them all); the password is a few bytes, written here so it is never copied.
fn feed(child: &mut Child, input: &Input<'_>) -> io::Result<()> {
    let Some(mut stdin) = child.stdin.take() else {
        return Ok(());
    };
    match input {
        Input::Password(login) => login.write_password(&mut stdin),
        Input::Bytes(bytes) => {
            let bytes = bytes.to_vec();
            thread::spawn(move || {
                let _ = stdin.write_all(&bytes);
            });
            Ok(())
        }
    }
}

/// Waits for the child until `timeout`; kills it past that (`None`).
fn wait(child: &mut Child, timeout: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + timeout;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
}

/// The last [`STDERR_TAIL_BYTES`] of a stream, read to its end.
fn tail(mut pipe: impl Read) -> Vec<u8> {
    let mut kept = Vec::new();
    let mut chunk = [0u8; 8192];
    while let Ok(n) = pipe.read(&mut chunk) {
        if n == 0 {
            break;
        }
        kept.extend_from_slice(&chunk[..n]);
        if kept.len() > STDERR_TAIL_BYTES {
            kept.drain(..kept.len() - STDERR_TAIL_BYTES);
        }
    }
    kept
}

/// `exit status 1` or `killed by signal 9`.
fn describe(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exit status {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("killed by signal {signal}");
        }
    }
    status.to_string()
}
