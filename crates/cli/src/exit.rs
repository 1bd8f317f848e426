//! Exit codes, the same for every command, and the one way a command says why it stops.

use crate::{
    env,
    output::{self, Io},
    settings::{Noted, Notice, SettingsError},
};
use snow_api::{Finding, Severity};
use snow_provision::ProvisionError;
use snow_provision::{KubeError, LifecycleError, helm::HelmError};
use std::{fmt::Display, process::ExitCode};

/// Everything passed.
pub const OK: u8 = 0;
/// A failure: the input was read and has findings of severity error, or the work failed.
pub const FAILURE: u8 = 1;
/// Usage error, or an input that could not be read at all.
pub const USAGE: u8 = 2;

/// What a command returns: its exit code either way, so that `?` can stop it early once the
/// reason has been printed.
pub type Outcome = Result<ExitCode, ExitCode>;

/// The exit code for a list of findings: 1 if any is an error, else 0.
pub fn for_findings(findings: &[snow_api::Finding]) -> ExitCode {
    ExitCode::from(if snow_api::has_errors(findings) {
        FAILURE
    } else {
        OK
    })
}

/// The one form every command says an error in: `❌ error: {what}` (`error: {what}` in plain
/// output), then `  hint: {hint}` when there is something to do.
pub fn say(io: &mut Io<'_>, what: impl Display, hint: Option<&str>) {
    io.err(&output::error_text(&what, hint));
}

/// Says `error: {what}` and gives exit 2 (usage, or input that cannot be used).
pub fn usage(io: &mut Io<'_>, what: impl Display) -> ExitCode {
    say(io, what, None);
    ExitCode::from(USAGE)
}

/// What to do about an archive that is not what `--artifacts` or `--from` needs, in the CLI's
/// words (the images library says what is wrong with the archive in its own).
pub const ARCHIVE_HINT: &str = "an archive is written by snowctl download artifacts; run the same command again to finish one that was interrupted";

/// Says `error: {what}` about an offline archive with [`ARCHIVE_HINT`] and gives exit 2.
pub fn archive(io: &mut Io<'_>, what: impl Display) -> ExitCode {
    say(io, what, Some(ARCHIVE_HINT));
    ExitCode::from(USAGE)
}

/// Says why charts could not be taken out of an archive: exit 2 when the archive cannot be used,
/// else 1.
pub fn charts(io: &mut Io<'_>, err: &snow_images::charts::ChartsError) -> ExitCode {
    match err.is_input() {
        true => usage(io, err),
        false => failed(io, err),
    }
}

/// Says `error: {what}` and gives exit 1 (the work failed).
pub fn failed(io: &mut Io<'_>, what: impl Display) -> ExitCode {
    say(io, what, None);
    ExitCode::from(FAILURE)
}

/// Says what went wrong in the lifecycle and what to do; exit 2 when the input (a kubeconfig,
/// the components, a backup directory) cannot be used ([`LifecycleError::is_input`]), else 1.
pub fn lifecycle(io: &mut Io<'_>, err: &LifecycleError) -> ExitCode {
    if let Some((about, findings)) = err.findings() {
        io.err(&snow_api::finding_text::text(
            &with_hints(findings),
            about,
            None,
            &[],
        ));
    }
    say(io, err, lifecycle_hint(err).as_deref());
    ExitCode::from(if err.is_input() { USAGE } else { FAILURE })
}

/// What the user can do about a lifecycle error, in the CLI's words (its commands and flags).
fn lifecycle_hint(err: &LifecycleError) -> Option<String> {
    Some(match err {
        LifecycleError::Kube(KubeError::Kubeconfig { .. }) => {
            "pass the management cluster's kubeconfig with --kubeconfig FILE or KUBECONFIG (files separated by ':', merged as kubectl merges them), and --context NAME to pick a context".into()
        }
        LifecycleError::Kube(KubeError::Unreachable { .. }) => {
            "check that the management cluster is up and that the kubeconfig (--kubeconfig, else KUBECONFIG, else ~/.kube/config) and --context point at it (kubectl get nodes, with the same ones)".into()
        }
        LifecycleError::Kube(KubeError::Api { code: 401 | 403, .. }) => {
            "the kubeconfig's user is not allowed to do this; use a cluster-admin kubeconfig".into()
        }
        LifecycleError::Kube(KubeError::Api { code: 404, .. }) => {
            "the management cluster does not serve this kind: install Cluster API and CAPAS (snowctl init --kubeconfig FILE)".into()
        }
        LifecycleError::Kube(KubeError::Api { .. }) => return None,
        LifecycleError::ProvidersMissing { .. } => {
            "install them: snowctl init --kubeconfig FILE --credentials CREDS --ca-bundle PEM; for a release older than the v1beta2 contract, pass --contract v1beta1".into()
        }
        LifecycleError::Kube(KubeError::Timeout { .. }) => {
            "look at the object's conditions (snowctl describe cluster NAME) and the CAPAS logs (kubectl -n capas-system logs deploy/capas-controller-manager); run the command again to keep waiting, or raise the timeout".into()
        }
        LifecycleError::Render(_) | LifecycleError::UpgradePlan(_) => {
            "check the spec with snowctl validate".into()
        }
        LifecycleError::Document { .. } | LifecycleError::Kube(KubeError::Document { .. }) => {
            return None;
        }
        LifecycleError::Rejected { .. } => {
            "keep the fields that cannot change as they are on the cluster; create a new cluster for the rest".into()
        }
        LifecycleError::DefaultKey { .. } => {
            "make each device named above reachable with its profile in EKSA_AWS_CREDENTIALS_FILE and run again, or set sshKeyName to a key pair every device has".into()
        }
        LifecycleError::ExistsDiffers { .. } => {
            "use snowctl upgrade cluster to change an existing cluster".into()
        }
        LifecycleError::Kube(KubeError::KubeconfigFileExists { .. }) => {
            "move the file away or pass --force to overwrite it".into()
        }
        LifecycleError::Write { .. } | LifecycleError::Kube(KubeError::Write { .. }) => {
            "check the directory and its permissions".into()
        }
        LifecycleError::Read { .. } | LifecycleError::Kube(KubeError::Read { .. }) => {
            "check the file and its permissions".into()
        }
        LifecycleError::MoveRefused { .. } => {
            "nothing was changed; fix every reason (a provider the target does not serve is installed there with snowctl init --kubeconfig FILE) and run the move again".into()
        }
        LifecycleError::NotImported { .. } => {
            "nothing was changed; pick another name for the import, or use the commands for managed clusters (snowctl delete cluster NAME)".into()
        }
        LifecycleError::Imported { cluster, .. } => format!(
            "nothing was changed; to forget the cluster, remove only its records: snowctl delete cluster {cluster} --records-only"
        ),
        LifecycleError::ManagedElsewhere { manager, .. } => format!(
            "nothing was changed; change the cluster through the system that manages it ({manager:?})"
        ),
        LifecycleError::Paused { cluster, .. } => format!(
            "nothing was changed; once whoever paused it is done, unpause it (kubectl -n eksa-system patch clusters.cluster.x-k8s.io {cluster} --type merge -p '{{\"spec\":{{\"paused\":false}},\"metadata\":{{\"annotations\":{{\"cluster.x-k8s.io/paused\":null}}}}}}') and run the command again"
        ),
        LifecycleError::UnlabelledCrds { .. } => {
            "run the kubectl label command above (clusterctl also labels each CRD cluster.x-k8s.io/provider=<provider>, which a move does not read), then run the command again".into()
        }
        LifecycleError::Backup { .. } => {
            "pass the directory a backup (snowctl move cluster NAME --to-directory DIR) wrote; every *.yaml file in it must be one object of the backup".into()
        }
        LifecycleError::BackupFailed { cause, .. } => format!(
            "{}; or upgrade without a backup with --no-backup",
            lifecycle_hint(cause).unwrap_or_else(|| "fix its cause and run the upgrade again".into())
        ),
        LifecycleError::Kube(KubeError::SecretKubeconfig { secret, .. }) => format!(
            "Cluster API publishes this Secret with an inline client certificate; see who wrote it and what it holds (kubectl get secret -n {} -o yaml)",
            secret.replace('/', " ")
        ),
        LifecycleError::Workload { cluster, .. } => format!(
            "the workload cluster is reached with the kubeconfig Cluster API publishes (Secret eksa-system/{cluster}-kubeconfig); check that its API server answers from here"
        ),
        LifecycleError::NoCniManifest => {
            "install helm (snowctl renders Cilium with helm template, as EKS Anywhere does) or pass a rendered manifest with --cni-manifest FILE".into()
        }
        LifecycleError::CiliumStore { .. } => {
            "store the output of helm template for these settings (snowctl store cilium renders it), with its DaemonSet kube-system/cilium and Deployment kube-system/cilium-operator".into()
        }
        LifecycleError::NoIdentity { .. } => {
            "give the device credentials: set EKSA_AWS_CREDENTIALS_FILE and EKSA_AWS_CA_BUNDLES_FILE (or --credentials and --ca-bundle); snowctl then renders the Secret".into()
        }
        LifecycleError::MissingVariables { .. } => {
            "set them in the environment; AWS_B64ENCODED_CREDENTIALS and AWS_B64ENCODED_CA_BUNDLES come from --credentials and --ca-bundle (EKSA_AWS_CREDENTIALS_FILE, EKSA_AWS_CA_BUNDLES_FILE)".into()
        }
        LifecycleError::Components { .. } => {
            "--components-dir holds DIR/<provider>/<version>/<file>, the file named as at the end of the bundle's URI (e.g. cluster-api/v1.13.5/core-components.yaml and its metadata.yaml); without it the files come from --artifacts or the bundle's URIs".into()
        }
        LifecycleError::ProviderVersionDiffers { .. } => {
            "snowctl init installs and completes, it does not upgrade: snowctl upgrade management-components upgrades to the bundle's versions (it never downgrades), or pass the bundle of the installed versions with --bundles".into()
        }
        LifecycleError::ComponentNotReady { object, .. } => format!(
            "look at {object} and its pods (kubectl describe, kubectl get events); run snowctl init again to keep waiting, or raise --wait-timeout"
        ),
        LifecycleError::ToolMissing { .. } => {
            "install kind (https://kind.sigs.k8s.io) and docker, or pass --bootstrap-kubeconfig FILE to use a cluster you already have (k3s, kind, any Kubernetes) as the bootstrap cluster".into()
        }
        LifecycleError::Command { .. } | LifecycleError::CommandTimeout { .. } => {
            "the command's own message is above; fix its cause and run snowctl again (it resumes), or pass --bootstrap-kubeconfig FILE to use another cluster".into()
        }
        LifecycleError::Release(_) => {
            "pass --bundles with an EKS Anywhere Bundles manifest that has what is named above (the cluster's Kubernetes version, its eksD.kindNode image, each management component's version and URIs)".into()
        }
        LifecycleError::NotFound { .. } => {
            "check the name and --kubeconfig (kubectl get clusters.cluster.x-k8s.io -n eksa-system lists the clusters)".into()
        }
    })
}

/// Says why a workflow stopped, with its findings and what to do; exit 2 for input that cannot be
/// used ([`ProvisionError::is_input`]), else 1.
pub fn provision(io: &mut Io<'_>, err: &ProvisionError) -> ExitCode {
    if let ProvisionError::Interrupted { step, source, left } = err {
        io.err(&format!("❌ {step} failed\n"));
        let code = provision(io, source);
        io.err(&format!("  {left}\n"));
        return code;
    }
    let hint = match err {
        ProvisionError::Lifecycle(e) => return lifecycle(io, e),
        ProvisionError::Input(finding) => {
            io.err(&output::diagnostic(&with_hint(finding), "preflight", None));
            return ExitCode::from(USAGE);
        }
        ProvisionError::Preflight { findings } => {
            io.err(&snow_api::finding_text::text(
                &with_hints(findings),
                "preflight",
                None,
                &[],
            ));
            io.err(&format!("❌ {err}\n"));
            io.err("  hint: fix the findings, or skip the device checks with --skip-validations\n");
            return ExitCode::from(FAILURE);
        }
        ProvisionError::ClusterExists { cluster } => {
            Some(format!("delete it there first (snowctl delete cluster {cluster})"))
        }
        ProvisionError::StillManages { .. } => Some(
            "delete or move them first (snowctl delete cluster NAME --kubeconfig …, snowctl move cluster)"
                .into(),
        ),
        ProvisionError::Helm(e) => helm_hint(e),
        _ => None,
    };
    let code = if err.is_input() {
        usage(io, err)
    } else {
        failed(io, err)
    };
    if let Some(hint) = hint {
        io.err(&format!("  hint: {hint}\n"));
    }
    code
}

/// What the user can do about a helm failure, in the CLI's words.
fn helm_hint(err: &HelmError) -> Option<String> {
    Some(match err {
        HelmError::NotFound { .. } => {
            "or pass --cni-manifest FILE with a Cilium manifest rendered elsewhere".into()
        }
        HelmError::LoginMissing { .. } => format!(
            "set {} and {} to the mirror's login",
            env::REGISTRY_USERNAME,
            env::REGISTRY_PASSWORD
        ),
        _ => return None,
    })
}

/// The CLI's hint for a finding whose remedy is one of its flags or environment variables, by
/// the finding's check (libraries say what is wrong in their own terms: the field or value).
fn finding_hint(finding: &Finding) -> Option<String> {
    let device_file = |flag: &str, var: &str| format!("pass {flag} FILE or set {var}");
    Some(match (finding.check.as_str(), finding.field.as_deref()) {
        (snow_provision::preflight::INPUT_CHECK, Some("credentials")) => {
            device_file("--credentials", env::CREDENTIALS_FILE)
        }
        (snow_provision::preflight::INPUT_CHECK, Some("ca_bundle")) => {
            device_file("--ca-bundle", env::CA_BUNDLES_FILE)
        }
        (snow_api::spec::MISSING_CLUSTER_CHECK, _) => {
            "start from `snowctl generate clusterconfig NAME --provider snow`".into()
        }
        (snow_credentials::registry::CHECK, _) => format!(
            "export {} and {}, or set authenticate: false",
            env::REGISTRY_USERNAME,
            env::REGISTRY_PASSWORD
        ),
        ("preflight.endpoint-in-use", _) if finding.severity == Severity::Error => {
            "choose an unused IP for the control-plane endpoint, or pass --skip-ip-check if the address is known to be free".into()
        }
        ("upgrade.missing", _) => "create it with snowctl create cluster, or check --kubeconfig".into(),
        (snow_api::release::VERSION_CHECK, _) if finding.severity == Severity::Error => {
            "set kubernetesVersion to one the release has, or name a release that has this one: --bundles FILE, --artifacts FILE or --release-manifest URL".into()
        }
        (snow_api::release::VERSION_CHECK, _) => {
            "the embedded sample is not the release create uses: validate without --offline checks the version against that release (the published one, or --bundles FILE or --artifacts FILE)".into()
        }
        _ => return None,
    })
}

/// `findings` with the CLI's hints (see [`finding_hint`]) in place of the libraries' for the
/// checks whose remedy is a flag: what every command prints.
pub fn with_hints(findings: &[Finding]) -> Vec<Finding> {
    findings.iter().map(with_hint).collect()
}

/// One finding with the CLI's hint, if its check has one.
pub fn with_hint(finding: &Finding) -> Finding {
    let mut finding = finding.clone();
    if let Some(hint) = finding_hint(&finding) {
        finding.hint = Some(hint);
    }
    finding
}

/// Says why settings could not be resolved (what the resolver wanted said before, first), in
/// the one error form with the CLI's hints; exit 2 for input that cannot be used, else 1.
pub fn settings(io: &mut Io<'_>, err: &SettingsError) -> ExitCode {
    match err {
        SettingsError::Usage(what) => usage(io, what),
        SettingsError::Usages(each) => {
            for what in each {
                say(io, what, None);
            }
            ExitCode::from(USAGE)
        }
        SettingsError::Hinted { what, hint } => {
            say(io, what, Some(hint));
            ExitCode::from(USAGE)
        }
        SettingsError::Failed(what) => failed(io, what),
        SettingsError::Archive(what) => archive(io, what),
        SettingsError::Findings {
            findings,
            about,
            text,
            conclusion,
        } => {
            io.err(&snow_api::finding_text::text(
                &with_hints(findings),
                about,
                text.as_deref(),
                &[],
            ));
            if let Some(conclusion) = conclusion {
                say(io, conclusion, None);
            }
            ExitCode::from(FAILURE)
        }
        SettingsError::Diagnostic {
            finding,
            about,
            text,
        } => {
            io.err(&output::diagnostic(
                &with_hint(finding),
                about,
                text.as_deref(),
            ));
            ExitCode::from(USAGE)
        }
        SettingsError::DeviceFile { what, hint } => {
            say(io, what, Some(hint));
            ExitCode::from(USAGE)
        }
        SettingsError::Lifecycle(e) => lifecycle(io, e),
        SettingsError::Provision(e) => provision(io, e),
        e @ SettingsError::Runtime(_) => failed(io, e),
        SettingsError::Noted { notices, error } => {
            self::notices(io, notices);
            settings(io, error)
        }
    }
}

/// Says what a resolver wanted said ([`Notice`]s), in order, on standard error; findings with
/// the CLI's hints.
pub fn notices(io: &mut Io<'_>, notices: &[Notice]) {
    for notice in notices {
        match notice {
            Notice::Note(text) => io.err(text),
            Notice::Progress(text) => io.progress(text),
            Notice::Findings {
                findings,
                about,
                files,
            } => {
                let files: Vec<&str> = files.iter().map(String::as_str).collect();
                io.err(&snow_api::finding_text::text(
                    &with_hints(findings),
                    about,
                    None,
                    &files,
                ));
            }
        }
    }
}

/// A resolver's value: its notices said, or its error said and its exit code.
pub fn noted<T>(io: &mut Io<'_>, resolved: Result<Noted<T>, SettingsError>) -> Result<T, ExitCode> {
    let Noted { value, notices } = settled(io, resolved)?;
    self::notices(io, &notices);
    Ok(value)
}

/// A resolver's value, or its error said and its exit code.
pub fn settled<T>(io: &mut Io<'_>, resolved: Result<T, SettingsError>) -> Result<T, ExitCode> {
    resolved.map_err(|e| settings(io, &e))
}

/// A runtime for one command (multi-threaded for the controller and image transfers).
pub fn runtime(io: &mut Io<'_>, threads: bool) -> Result<tokio::runtime::Runtime, ExitCode> {
    let mut builder = if threads {
        tokio::runtime::Builder::new_multi_thread()
    } else {
        tokio::runtime::Builder::new_current_thread()
    };
    builder
        .enable_all()
        .build()
        .map_err(|e| failed(io, format_args!("cannot start the async runtime: {e}")))
}

#[cfg(test)]
mod tests {
    use super::{lifecycle_hint, with_hints};
    use snow_api::Finding;
    use snow_provision::LifecycleError;

    #[test]
    fn findings_get_the_cli_hint_by_check_and_keep_the_rest() {
        let missing = |field: &str| {
            Finding::error(snow_provision::preflight::INPUT_CHECK, "missing").field(field)
        };
        let other = Finding::error("spec.other", "wrong").hint("the library's hint");
        let hinted = with_hints(&[missing("credentials"), missing("ca_bundle"), other.clone()]);
        let hint = |i: usize| hinted[i].hint.as_deref().unwrap_or_default();
        assert!(
            hint(0).contains("--credentials FILE") && hint(0).contains("EKSA_AWS_CREDENTIALS_FILE"),
            "{}",
            hint(0)
        );
        assert!(
            hint(1).contains("--ca-bundle FILE") && hint(1).contains("EKSA_AWS_CA_BUNDLES_FILE"),
            "{}",
            hint(1)
        );
        assert_eq!(hinted[2], other);
    }

    #[test]
    fn lifecycle_hints_name_the_cli_commands_and_flags() {
        let hint = |e: LifecycleError| lifecycle_hint(&e).unwrap();
        let not_ready = LifecycleError::ComponentNotReady {
            object: "Deployment capi-system/capi-controller-manager".into(),
            condition: "Available".into(),
            detail: String::new(),
            after: "1s".into(),
        };
        assert!(hint(not_ready).contains("snowctl init again"));
        let differs = LifecycleError::ProviderVersionDiffers {
            differences: Vec::new(),
        };
        assert!(hint(differs).contains("snowctl upgrade management-components"));
        let missing = LifecycleError::ToolMissing {
            tool: "kind".into(),
            searched: "PATH".into(),
        };
        assert!(hint(missing).contains("--bootstrap-kubeconfig FILE"));
    }

    #[test]
    fn the_refusals_and_unlabelled_crds_say_what_to_do() {
        let hint = |e: LifecycleError| lifecycle_hint(&e).unwrap();
        let paused = LifecycleError::Paused {
            cluster: "edge".into(),
            action: "upgrade cluster".into(),
            how: "spec.paused: true".into(),
        };
        assert!(
            hint(paused).contains(
                "kubectl -n eksa-system patch clusters.cluster.x-k8s.io edge --type merge -p '{\"spec\":{\"paused\":false}"
            )
        );
        let elsewhere = LifecycleError::ManagedElsewhere {
            cluster: "edge".into(),
            action: "delete cluster".into(),
            manager: "fleet".into(),
        };
        assert!(hint(elsewhere).contains("(\"fleet\")"));
        let backup = LifecycleError::BackupFailed {
            cluster: "edge".into(),
            cause: Box::new(LifecycleError::UnlabelledCrds {
                cluster: "edge".into(),
                crds: vec!["clusters.cluster.x-k8s.io".into()],
            }),
        };
        let said = hint(backup);
        assert!(
            said.contains("kubectl label command above") && said.ends_with("--no-backup"),
            "{said}"
        );
    }
}
