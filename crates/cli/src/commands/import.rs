//! `snowctl import cluster` and `snowctl get clusters`: an existing cluster recorded
//! observe-only, and the site's clusters in one list. The work is `snow_provision::import`'s.

use crate::{
    args::{GetClustersArgs, ImportClusterArgs},
    env::Environment,
    exit::{self, Outcome},
    output::Io,
    settings::{GetClustersSettings, ImportClusterSettings},
};
use snow_provision::Observation;
use snow_provision::import::{self, Devices, Site};
use std::fmt::Write as _;
use std::process::ExitCode;

/// Runs `snowctl import cluster`.
pub fn cluster(args: ImportClusterArgs, environment: &Environment, io: &mut Io<'_>) -> Outcome {
    let ImportClusterSettings {
        management,
        workload,
        fleet,
    } = exit::noted(io, ImportClusterSettings::resolve(&args, environment))?;
    let runtime = exit::runtime(io, false)?;
    let name = args.name;
    let result = runtime.block_on(async {
        let mgmt = management.connect_quietly().await?;
        let devices = fleet.as_ref().map(|f| Devices {
            devices: &f.devices,
            without_credentials: &f.without_credentials,
        });
        import::import(&mgmt, &name, &workload, devices).await
    });
    let imported = result.map_err(|e| exit::provision(io, &e))?;
    io.out(&observation_text(&imported.observation));
    let verb = if imported.reflected.refreshed {
        "refreshed"
    } else {
        "imported"
    };
    io.progress(&format!(
        "🎉 Cluster {name} {verb} observe-only (Cluster {}, AWSSnowCluster annotated cluster.x-k8s.io/managed-by: snowctl, Secret {name}-kubeconfig, ConfigMap {name}-observed in eksa-system); nothing was written to the devices or the cluster\n",
        imported.reflected.contract
    ));
    let gaps = !imported.observation.device_errors.is_empty();
    Ok(ExitCode::from(if gaps { exit::FAILURE } else { 0 }))
}

/// The observation as text: endpoint, CNI, one line per node, then what did not match.
fn observation_text(o: &Observation) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "endpoint: {}:{}", o.endpoint.host, o.endpoint.port);
    let _ = writeln!(out, "cni: {}", o.cni.as_deref().unwrap_or("none found"));
    for n in &o.nodes {
        let roles = if n.roles.is_empty() {
            "worker".to_owned()
        } else {
            n.roles.join(",")
        };
        let ready = if n.ready { "Ready" } else { "NotReady" };
        let _ = write!(
            out,
            "node {} ({roles}) {} {ready} {}",
            n.name, n.kubelet_version, n.os_image
        );
        match &n.instance {
            Some(i) => {
                let _ = writeln!(
                    out,
                    " on {} instance {} {} ami {} key {} dnis {} (by {})",
                    i.device,
                    i.id,
                    i.instance_type,
                    i.image_id.as_deref().unwrap_or("-"),
                    i.key_name.as_deref().unwrap_or("-"),
                    i.dnis.len(),
                    i.matched_by
                );
            }
            None => out.push_str(" (no instance found)\n"),
        }
    }
    for t in &o.tagged_without_node {
        let _ = writeln!(out, "tagged for the cluster but no node: {t}");
    }
    for e in &o.device_errors {
        let _ = writeln!(out, "device error: {e}");
    }
    out
}

/// Runs `snowctl get clusters`.
pub fn clusters(args: GetClustersArgs, environment: &Environment, io: &mut Io<'_>) -> Outcome {
    let GetClustersSettings { management, fleet } =
        exit::noted(io, GetClustersSettings::resolve(&args, environment))?;
    let runtime = exit::runtime(io, false)?;
    let result = runtime.block_on(async {
        let mgmt = management.connect_quietly().await?;
        let devices = fleet.as_ref().map(|f| Devices {
            devices: &f.devices,
            without_credentials: &f.without_credentials,
        });
        import::site(&mgmt, devices).await
    });
    let site = result.map_err(|e| exit::provision(io, &e))?;
    io.out(&crate::output::structured(args.output, &site).unwrap_or_else(|| site_text(&site)));
    let gaps = !site.device_errors.is_empty();
    Ok(ExitCode::from(if gaps { exit::FAILURE } else { 0 }))
}

fn site_text(site: &Site) -> String {
    let mut out =
        String::from("NAME\tKIND\tVERSION\tCONTROL-PLANE\tWORKERS\tREADY\tDEVICES\tMIRROR\n");
    for c in &site.clusters {
        let version = c.kubernetes_versions.join(",");
        let _ = writeln!(
            out,
            "{}\t{}\t{}\t{}\t{}\t{}/{}{}\t{}\t{}",
            c.name,
            c.kind,
            if version.is_empty() { "-" } else { &version },
            c.control_plane_nodes,
            c.worker_nodes,
            c.ready_nodes,
            c.control_plane_nodes + c.worker_nodes,
            if c.ready { "" } else { " (not ready)" },
            if c.devices.is_empty() {
                "-".to_owned()
            } else {
                c.devices.join(",")
            },
            c.registry_mirror.as_ref().map_or_else(
                || "-".to_owned(),
                |m| format!(
                    "{}:{} {}",
                    m.endpoint,
                    m.port,
                    m.answer.as_ref().map_or_else(
                        || "not asked".to_owned(),
                        |a| crate::output::mirror_answer(m, a, true)
                    )
                )
            ),
        );
    }
    if site.devices_read {
        for u in &site.unaccounted {
            let tag = u
                .cluster_tag
                .as_deref()
                .map(|t| format!(", tagged for unknown cluster {t}"))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "unaccounted: {}/{} {} ({}{tag})",
                u.device,
                u.id,
                u.name.as_deref().unwrap_or("-"),
                u.state
            );
        }
    }
    for e in &site.device_errors {
        let _ = writeln!(out, "device error: {e}");
    }
    out
}
