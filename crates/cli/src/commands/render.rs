//! `snowctl render -f FILE` (and `create cluster --dry-run`): every Cluster API and CAPAS object
//! of a cluster as YAML; with `--existing`, an upgrade's objects and its plan.

use crate::{
    args::RenderArgs,
    exit,
    output::{self, Io},
    settings::{self, RenderSettings},
};
use capi_render::upgrade;
use std::process::ExitCode;

/// Runs `snowctl render`.
pub fn run(args: RenderArgs, io: &mut Io<'_>) -> ExitCode {
    match render(&args, io) {
        Ok(()) => ExitCode::SUCCESS,
        Err(code) => code,
    }
}

fn render(args: &RenderArgs, io: &mut Io<'_>) -> Result<(), ExitCode> {
    let spec = settings::load_spec(&args.file, io)?.spec;
    let loaded = RenderSettings::resolve(args, &spec, io)?;
    if let Some(note) = snow_lifecycle::ssh_key::dry_run_note(&spec) {
        io.err(&format!("note: {note}\n"));
    }
    let failed = |io: &mut Io<'_>, err: String| {
        io.err(&format!("error: {err}\n"));
        ExitCode::from(exit::FINDINGS)
    };
    let release = loaded.release(&spec).map_err(|e| failed(io, e))?;
    let objects = match &args.existing {
        None => capi_render::render(&spec, &release, &loaded.options())
            .map_err(|e| failed(io, e.to_string()))?,
        Some(path) => {
            let live = settings::read_text(path, "the existing objects", io)?;
            let existing = upgrade::Existing::from_yaml(&live).map_err(|err| {
                io.err(&format!("error: {}: {err}\n", output::source_name(path)));
                ExitCode::from(exit::USAGE)
            })?;
            let plan = upgrade::plan(&spec, &release, &loaded.options(), &existing)
                .map_err(|e| failed(io, e.to_string()))?;
            for line in plan.lines() {
                io.err(&format!("{line}\n"));
            }
            plan.objects
        }
    };
    io.out(&capi_render::to_yaml(&objects));
    Ok(())
}
