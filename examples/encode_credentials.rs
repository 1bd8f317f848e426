//! Check a Snow credentials file and CA bundle, then print what CAPAS and EKS-A are given:
//! the clusterctl exports and the three Secrets (as JSON).
//!
//! ```text
//! cargo run -p snowctl-examples --example encode_credentials -- credentials.ini ca-bundle.pem [cluster]
//! ```
//!
//! Without arguments, the paths come from `EKSA_AWS_CREDENTIALS_FILE` and
//! `EKSA_AWS_CA_BUNDLES_FILE`. Exits 0 when both files are sound, 1 when they have error
//! findings (nothing is encoded then), 2 when a file cannot be read.
//!
//! NB: the output holds the keys, base64-encoded: it is meant for `eval` or `kubectl apply`,
//! not for a log.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use snow_credentials::{
    ClusterctlEnv, UnixTime, capas_bootstrap_secret, capas_cluster_secret, check,
    eksa_identity_secret, load_ca_bundle, load_credentials,
};
use std::path::PathBuf;
use std::process::ExitCode;

fn arg_or_env(args: &[String], index: usize, var: &str) -> Option<PathBuf> {
    args.get(index)
        .cloned()
        .or_else(|| std::env::var(var).ok().filter(|v| !v.is_empty()))
        .map(PathBuf::from)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    run(&args)
}

/// The program, on its arguments (`tests/examples.rs` runs it against the stand-ins).
pub(crate) fn run(args: &[String]) -> ExitCode {
    let (Some(creds_path), Some(bundle_path)) = (
        arg_or_env(args, 0, "EKSA_AWS_CREDENTIALS_FILE"),
        arg_or_env(args, 1, "EKSA_AWS_CA_BUNDLES_FILE"),
    ) else {
        eprintln!("usage: encode_credentials <credentials.ini> <ca-bundle.pem> [cluster-name]");
        return ExitCode::from(2);
    };
    let cluster = args.get(2).cloned().unwrap_or_else(|| "my-cluster".into());

    // Read and parse both files: every problem is a finding with file, line and hint.
    let (credentials, mut findings) = match load_credentials(&creds_path) {
        Ok(loaded) => loaded,
        Err(err) => {
            eprintln!("{err} ({})", err.hint());
            return ExitCode::from(2);
        }
    };
    let (bundle, bundle_findings) = match load_ca_bundle(&bundle_path) {
        Ok(loaded) => loaded,
        Err(err) => {
            eprintln!("{err} ({})", err.hint());
            return ExitCode::from(2);
        }
    };
    findings.extend(bundle_findings);

    // Expiry and coverage: every device needs a certificate that covers it.
    let report = check(&credentials, &bundle, UnixTime::now());
    findings.extend(report.findings);
    for device in &report.devices {
        eprintln!(
            "device {}: keys {}, certificate {}, expires {}",
            device.device,
            if device.access_key_id && device.secret_access_key {
                "ok"
            } else {
                "missing"
            },
            if device.covered {
                "ok"
            } else {
                "missing or not valid"
            },
            device.expires.as_deref().unwrap_or("-"),
        );
    }
    for finding in &findings {
        // A finding's Display never contains a key.
        eprintln!("{finding}");
    }
    if snow_api::has_errors(&findings) {
        return ExitCode::from(1);
    }

    // The clusterctl environment for `clusterctl init --infrastructure snow`.
    let env = ClusterctlEnv::new(&credentials, &bundle);
    let mut stdout = std::io::stdout();
    if env.write_exports(&mut stdout).is_err() {
        return ExitCode::from(2);
    }

    // The Secrets: what clusterctl creates for CAPAS, the EKS-A identity Secret, and the
    // per-cluster CAPAS Secret that `clusterctl move` carries along.
    for secret in [
        capas_bootstrap_secret(&credentials, &bundle),
        eksa_identity_secret(
            &format!("{cluster}-snow-credentials"),
            "default",
            &credentials,
            &bundle,
        ),
        capas_cluster_secret(&cluster, &credentials, &bundle),
    ] {
        println!("---\n{}", secret.to_json());
    }

    // A per-device AWS SDK credentials provider (what snow-validate signs requests with).
    if let Some(device) = credentials.devices().first()
        && let Some(provider) = device.provider()
    {
        eprintln!("provider for {}: {provider:?}", provider.device());
    }
    ExitCode::SUCCESS
}
