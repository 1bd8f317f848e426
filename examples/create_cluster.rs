//! Create a Snow cluster on a management cluster from a program: check the spec, connect, apply
//! the Cluster API and CAPAS objects, install Cilium on the workload cluster, wait until the
//! cluster is ready, and write its kubeconfig.
//!
//! ```text
//! cargo run -p snowctl-examples --example create_cluster -- cluster.yaml mgmt.kubeconfig cilium.yaml
//! cargo run -p snowctl-examples --example create_cluster -- cluster.yaml mgmt.kubeconfig cilium.yaml credentials.ini ca-bundle.pem
//! ```
//!
//! `cilium.yaml` is a rendered Cilium manifest (`helm template` output, or what
//! `snow_lifecycle::cni::helm` renders): Cluster API installs no CNI, and without one no node
//! becomes ready. The management cluster must run Cluster API and CAPAS (and etcdadm for
//! external etcd). With
//! the credentials and CA bundle, the CAPAS identity Secret is rendered and applied; without
//! them it must already be on the management cluster. Progress goes to stderr; the workload
//! kubeconfig is written to `./<cluster>/<cluster>-eks-a-cluster.kubeconfig`. Exits 1 on
//! failure (with the error and what to do), 2 on bad arguments or unreadable input.

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "an example program reports to its terminal"
)]

use snow_api::release::ReleaseInputs;
use snow_lifecycle::{
    self as lifecycle, ClusterRequest, CreateOptions, LifecycleError, Management, SecretInputs,
    cni::CniManifest,
};
use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Ok(dir) = std::env::current_dir() else {
        eprintln!("cannot read the current directory");
        return ExitCode::from(2);
    };
    run(&args, &dir)
}

/// The program, on its arguments, writing the kubeconfig under `dir` (`tests/examples.rs` runs
/// it against the Kubernetes API stand-in).
pub(crate) fn run(args: &[String], dir: &Path) -> ExitCode {
    let (spec_path, kubeconfig, cilium, device_files) = match args {
        [spec, kubeconfig, cilium] => (spec, kubeconfig, cilium, None),
        [spec, kubeconfig, cilium, credentials, bundle] => {
            (spec, kubeconfig, cilium, Some((credentials, bundle)))
        }
        _ => {
            eprintln!(
                "usage: create_cluster <cluster.yaml> <mgmt.kubeconfig> <cilium.yaml> [credentials.ini ca-bundle.pem]"
            );
            return ExitCode::from(2);
        }
    };
    // The Cilium manifest, checked for the objects create waits for.
    let cni = match std::fs::read_to_string(cilium)
        .map_err(|e| e.to_string())
        .and_then(|text| CniManifest::parse(&text).map_err(|e| e.to_string()))
    {
        Ok(cni) => cni,
        Err(err) => {
            eprintln!("{cilium}: {err}");
            return ExitCode::from(2);
        }
    };
    let options = CreateOptions {
        cni: Some(cni),
        ..CreateOptions::default()
    };

    // The spec, read strictly and checked offline.
    let text = match std::fs::read_to_string(spec_path) {
        Ok(text) => text,
        Err(err) => {
            eprintln!("cannot read {spec_path}: {err}");
            return ExitCode::from(2);
        }
    };
    let spec = match snow_api::check(&text).map(snow_api::Report::into_valid) {
        Ok(Ok(spec)) => spec,
        Ok(Err(report)) => {
            for finding in &report.findings {
                eprintln!("{finding}");
            }
            return ExitCode::from(1);
        }
        Err(err) => {
            eprintln!("{spec_path}: {err}");
            return ExitCode::from(2);
        }
    };
    // Versions, images and the Cluster API contract, resolved once for this spec.
    let inputs = match ReleaseInputs::embedded() {
        Ok(inputs) => inputs,
        Err(err) => {
            eprintln!("{err}");
            return ExitCode::from(1);
        }
    };
    let release = match inputs.resolve(&spec, None) {
        Ok(release) => release,
        Err(err) => {
            eprintln!("{err}");
            return ExitCode::from(1);
        }
    };

    // The device files, for the CAPAS identity Secret.
    let secrets = match device_files {
        None => None,
        Some((credentials, bundle)) => {
            let loaded =
                snow_credentials::load_credentials(Path::new(credentials)).and_then(|(c, cf)| {
                    snow_credentials::load_ca_bundle(Path::new(bundle))
                        .map(|(b, bf)| (c, b, cf, bf))
                });
            match loaded {
                Ok((c, b, cf, bf)) => {
                    let findings: Vec<_> = cf.into_iter().chain(bf).collect();
                    if snow_api::has_errors(&findings) {
                        for finding in &findings {
                            eprintln!("{finding}");
                        }
                        return ExitCode::from(1);
                    }
                    Some((c, b))
                }
                Err(err) => {
                    eprintln!("{err} ({})", err.hint());
                    return ExitCode::from(2);
                }
            }
        }
    };
    let request = ClusterRequest {
        spec: &spec,
        spec_text: &text,
        release: &release,
        secrets: secrets
            .as_ref()
            .map(|(credentials, ca_bundle)| SecretInputs {
                credentials,
                ca_bundle,
            }),
        default_ssh_key_name: None,
        registry_credentials: None,
    };

    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(err) => {
            eprintln!("cannot start tokio: {err}");
            return ExitCode::from(2);
        }
    };
    match runtime.block_on(create(Path::new(kubeconfig), &request, &options, dir)) {
        Ok(path) => {
            eprintln!(
                "cluster {} is ready; kubeconfig: {}",
                spec.name(),
                path.display()
            );
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("error: {err}");
            if let LifecycleError::Rejected { findings, .. } = &err {
                for finding in findings {
                    eprintln!("  {finding}");
                }
            }
            match err {
                LifecycleError::Kube(snow_lifecycle::KubeError::Kubeconfig { .. }) => {
                    ExitCode::from(2)
                }
                _ => ExitCode::from(1),
            }
        }
    }
}

/// Connects, creates (or converges) the cluster, and writes its kubeconfig under `dir`.
async fn create(
    kubeconfig: &Path,
    request: &ClusterRequest<'_>,
    options: &CreateOptions,
    dir: &Path,
) -> Result<std::path::PathBuf, LifecycleError> {
    let mgmt = Management::connect(&snow_lifecycle::KubeconfigSource::file(kubeconfig)).await?;
    let created = lifecycle::create(&mgmt, request, options, &mut |event| {
        eprintln!("{event}");
    })
    .await?;
    let (path, _) =
        lifecycle::kubeconfig::write(dir, &created.cluster, &created.kubeconfig, false)?;
    Ok(path)
}
