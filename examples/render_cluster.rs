//! Render the Cluster API and CAPAS objects of a cluster spec with the embedded release catalog.
//!
//! ```text
//! cargo run -p snowctl-examples --example render_cluster -- cluster.yaml
//! ```

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    run(&args)
}

/// The program, on its arguments (`tests/examples.rs` runs it against the stand-ins).
pub(crate) fn run(args: &[String]) -> ExitCode {
    let Some(path) = args.first() else {
        eprintln!("usage: render_cluster <cluster.yaml>");
        return ExitCode::from(2);
    };
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) => {
            eprintln!("cannot read {path}: {err}");
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
            eprintln!("{path}: {err}");
            return ExitCode::from(2);
        }
    };
    let inputs = match snow_api::release::ReleaseInputs::embedded() {
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
    match capi_render::render(&spec, &release, &capi_render::RenderOptions::default()) {
        Ok(objects) => {
            for o in &objects {
                eprintln!("{} {}/{}", o.api_version, o.kind, o.name);
            }
            print!("{}", capi_render::to_yaml(&objects));
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("{err}");
            ExitCode::from(1)
        }
    }
}
