//! `snowctl store cilium -f FILE`: renders Cilium where helm (or a given manifest, or an offline
//! archive's charts) is at hand, and stores it on the management cluster for
//! `snowctl controller --cni-stored`, which cannot run helm.

use crate::{
    args::StoreCiliumArgs,
    env::Environment,
    exit::{self, Outcome},
    output::Io,
    settings::{GlobalSettings, StoreCiliumSettings},
};
use snow_provision::{
    Milestones, StoredCiliumSource as Source, StoredOutcome as Stored, helm::HelmOptions,
    store_cilium,
};
use std::process::ExitCode;

/// Runs `snowctl store cilium`.
pub fn cilium(
    args: StoreCiliumArgs,
    global: GlobalSettings,
    environment: &Environment,
    io: &mut Io<'_>,
) -> Outcome {
    let StoreCiliumSettings {
        management,
        spec,
        login,
        given,
        catalog,
    } = exit::noted(io, StoreCiliumSettings::resolve(&args, environment))?;
    let inputs = &catalog.inputs;
    let release = inputs
        .resolve(&spec, None)
        .map_err(|e| exit::usage(io, e))?;
    let options = HelmOptions {
        login,
        ..HelmOptions::default()
    };
    // Kept until the command ends: the chart files are removed with it.
    let mut _charts = None;
    // The charts come from the archive the catalog was read from, opened once.
    let source = match (&args.cni_manifest, &catalog.archive) {
        (Some(_), _) => Source::Given(given.unwrap_or_default()),
        (None, Some(archive)) => {
            let charts = snow_images::charts::cilium_charts_of(archive, inputs);
            let charts = charts.map_err(|e| exit::charts(io, &e))?;
            let source = Source::ChartFiles {
                charts: charts.files.clone(),
                options,
            };
            _charts = Some(charts);
            source
        }
        (None, None) => Source::Helm(options),
    };
    let runtime = exit::runtime(io, false)?;
    let outcome = runtime.block_on(async {
        let mgmt = management.connect_quietly().await?;
        io.progress(&format!("Management cluster: {}\n", mgmt.server()));
        let mut milestones = Milestones::new(global.verbose > 0);
        let mut events = |event| {
            if let Some(line) = milestones.line(&event) {
                io.progress(&format!("{line}\n"));
            }
        };
        store_cilium(&mgmt, &spec, &release, Some(inputs), &source, &mut events).await
    });
    let reports = outcome.map_err(|e| exit::provision(io, &e))?;
    let mut failed = 0;
    for report in reports {
        let what = match report.own {
            true => "this cluster's settings",
            false => "default settings",
        };
        let done = match &report.outcome {
            Stored::Written => "stored".to_owned(),
            Stored::Unchanged => "already stored".to_owned(),
            Stored::NoChart => "not stored (no chart for it)".to_owned(),
            Stored::Failed(why) => {
                failed += 1;
                exit::say(io, why, None);
                "FAILED".to_owned()
            }
        };
        io.out(&format!(
            "{} Kubernetes {} ({what}): {done}\n",
            report.name, report.kube_version
        ));
    }
    match failed {
        0 => Ok(ExitCode::SUCCESS),
        n => Err(exit::failed(
            io,
            format!(
                "{n} Cilium manifest(s) not stored (said above); run the command again once fixed: what is stored is kept"
            ),
        )),
    }
}
