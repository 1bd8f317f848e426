//! `snowctl version`: this snowctl, the catalogs it reads, and the programs some commands run,
//! each found or not, so a user learns before a create what is missing.

use crate::{
    args::VersionArgs,
    env::Environment,
    exit::{self, Outcome},
    output::{self, Io},
};
use snow_api::release::{ReleaseInputs, eksa::DEFAULT_RELEASE_MANIFEST};
use snow_provision::bootstrap::find_executable;
use std::{path::Path, process::ExitCode};

/// What `snowctl version` reports.
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Report {
    version: &'static str,
    embedded_catalog: Catalog,
    release_manifest: &'static str,
    programs: Vec<Program>,
}

/// The catalog built into snowctl.
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Catalog {
    bundle_number: i64,
    kubernetes_versions: Vec<String>,
    used_by: &'static str,
}

/// A program a command runs, where `PATH` has it.
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Program {
    name: &'static str,
    path: Option<String>,
    needed_by: &'static str,
}

/// The programs snowctl runs, and which commands need them (or what replaces them).
const PROGRAMS: [(&str, &str); 3] = [
    (
        "helm",
        "create and upgrade cluster, store cilium (render Cilium; or --cni-manifest FILE)",
    ),
    (
        "kind",
        "create and delete of a cluster that manages itself (the bootstrap cluster; or --bootstrap-kubeconfig FILE)",
    ),
    ("docker", "kind (its nodes are containers)"),
];

/// Runs `snowctl version`: exit 0 whatever is missing (what needs it says so when it runs).
pub fn run(args: &VersionArgs, environment: &Environment, io: &mut Io<'_>) -> Outcome {
    let catalog = ReleaseInputs::embedded().map_err(|e| exit::failed(io, e))?;
    let search = environment.var_os(crate::env::PATH);
    let report = Report {
        version: env!("CARGO_PKG_VERSION"),
        embedded_catalog: Catalog {
            bundle_number: catalog.bundles.spec.number,
            kubernetes_versions: catalog.bundles.kube_versions(),
            used_by: "generate, validate --offline and render (a development build of EKS Anywhere's sample: its images are not published)",
        },
        release_manifest: DEFAULT_RELEASE_MANIFEST,
        programs: PROGRAMS
            .iter()
            .map(|&(name, needed_by)| Program {
                name,
                path: find_executable(Path::new(name), search).map(|p| p.display().to_string()),
                needed_by,
            })
            .collect(),
    };
    let text = output::structured(args.output, &report).unwrap_or_else(|| text(&report));
    io.out(&text);
    Ok(ExitCode::SUCCESS)
}

fn text(report: &Report) -> String {
    let mut out = format!("snowctl {}\n", report.version);
    let c = &report.embedded_catalog;
    out.push_str(&format!(
        "embedded catalog: bundle {}, Kubernetes {}; used by {}\n",
        c.bundle_number,
        c.kubernetes_versions.join(", "),
        c.used_by
    ));
    out.push_str(&format!(
        "release manifest: {} (without --bundles, --artifacts or --release-manifest, init, create, upgrade, delete, download artifacts, import-images, store cilium and the controller take the newest release with a Snow section from it)\n",
        report.release_manifest
    ));
    out.push_str("programs:\n");
    for p in &report.programs {
        let found = p.path.as_deref().unwrap_or("not found on PATH");
        out.push_str(&format!("  {:<7}{found}: {}\n", p.name, p.needed_by));
    }
    out
}
