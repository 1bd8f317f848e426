//! Render the Cluster API and CAPAS objects of a cluster spec with the embedded release catalog.
//!
//! ```text
//! cargo run -p snowctl-examples --example render_cluster -- cluster.yaml
//! ```

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::process::ExitCode;

fn main() -> ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: render_cluster <cluster.yaml>");
        return ExitCode::from(2);
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(err) => {
            eprintln!("cannot read {path}: {err}");
            return ExitCode::from(2);
        }
    };
    let spec = match snow_api::check(&text) {
        Ok(report) if report.is_valid() => report.spec,
        Ok(report) => {
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
    let Some(spec) = spec else {
        return ExitCode::from(1);
    };
    let inputs = match capi_render::ReleaseInputs::embedded() {
        Ok(inputs) => inputs,
        Err(err) => {
            eprintln!("{err}");
            return ExitCode::from(1);
        }
    };
    match capi_render::render(&spec, &inputs, &capi_render::RenderOptions::default()) {
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
