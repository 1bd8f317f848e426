//! `snowctl render -f FILE` (and `create cluster --dry-run`): every Cluster API and CAPAS object
//! of a cluster as YAML; with `--existing`, an upgrade's objects and its plan.

use crate::{
    args::RenderArgs,
    env::Environment,
    exit::{self, Outcome},
    output::{self, Io},
    settings::{self, RenderSettings},
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
    let spec = exit::settled(io, settings::load_spec(&args.file, environment))?.spec;
    let default = match published {
        None => settings::ReleaseDefault::Sample,
        Some((cache_dir, ca_certs)) => settings::ReleaseDefault::Published {
            kube_version: Some(spec.kubernetes_version()),
            cache_dir,
            ca_certs,
        },
    };
    let loaded = exit::settled(
        io,
        RenderSettings::resolve(args, &spec, default, environment),
    )?;
    exit::notices(io, &loaded.notices);
    if let Some(note) = snow_provision::default_key_note(&spec) {
        io.err(&format!(
            "note: {note}
"
        ));
    }
    let release = loaded.release(&spec).map_err(|e| exit::failed(io, e))?;
    let objects = match existing {
        None => capi_render::render(&spec, &release, &loaded.options())
            .map_err(|e| exit::failed(io, e))?,
        Some(path) => {
            let live = exit::settled(io, settings::read_text(path, "the existing objects"))?;
            let existing = upgrade::Existing::from_yaml(&live)
                .map_err(|err| exit::usage(io, format!("{}: {err}", output::source_name(path))))?;
            let plan = upgrade::plan(&spec, &release, &loaded.options(), &existing)
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
