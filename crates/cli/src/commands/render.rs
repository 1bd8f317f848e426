//! `snowctl render -f FILE` (and `create cluster --dry-run`): every Cluster API and CAPAS object
//! of a cluster as YAML; with `--existing`, an upgrade's objects and its plan.

use crate::{
    args::RenderArgs,
    env::Environment,
    exit::{self, Outcome},
    output::Io,
    settings::RenderSettings,
};
use capi_render::upgrade;
use std::process::ExitCode;

/// Runs `snowctl render` (with `existing`, `--existing`): on the embedded sample catalog unless a
/// release is given, or with
/// `published` (`create cluster --dry-run`: its `--cache-dir` and `--ca-cert`) on the published
/// release `create` would use.
pub fn run(
    args: &RenderArgs,
    existing: Option<&std::path::Path>,
    published: Option<(Option<&std::path::Path>, &[std::path::PathBuf])>,
    environment: &Environment,
    io: &mut Io<'_>,
) -> Outcome {
    let resolved = RenderSettings::resolve(args, existing, published, environment);
    let RenderSettings {
        spec,
        inputs,
        existing,
    } = exit::noted(io, resolved)?;
    let release = inputs.release(&spec).map_err(|e| exit::failed(io, e))?;
    let objects = match existing {
        None => capi_render::render(&spec, &release, &inputs.options())
            .map_err(|e| exit::failed(io, e))?,
        Some((name, live)) => {
            let existing = upgrade::Existing::from_yaml(&live)
                .map_err(|err| exit::usage(io, format!("{name}: {err}")))?;
            let plan = upgrade::plan(&spec, &release, &inputs.options(), &existing)
                .map_err(|e| exit::failed(io, e))?;
            for line in plan.lines() {
                io.progress(&format!("{line}\n"));
            }
            plan.objects
        }
    };
    io.out(&capi_render::to_yaml(&objects));
    Ok(ExitCode::SUCCESS)
}
