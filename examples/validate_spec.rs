//! Load a cluster spec from a path and print its findings.
//!
//! ```text
//! cargo run -p snowctl-examples --example validate_spec -- cluster.yaml
//! ```
//!
//! Exits 0 when the spec is valid, 1 when it has error findings, 2 when it cannot be read.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    run(&args)
}

/// The program, on its arguments (`tests/examples.rs` runs it against the stand-ins).
pub(crate) fn run(args: &[String]) -> ExitCode {
    let Some(path) = args.first() else {
        eprintln!("usage: validate_spec <cluster.yaml>");
        return ExitCode::from(2);
    };
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(err) => {
            eprintln!("cannot read {path}: {err}");
            return ExitCode::from(2);
        }
    };
    // Parse (strict, with positions), apply defaults, run every static rule.
    let report = match snow_api::decode(&bytes).and_then(snow_api::check) {
        Ok(report) => report,
        Err(err) => {
            eprintln!("{path}: {err}");
            return ExitCode::from(2);
        }
    };
    for default in &report.defaults {
        println!(
            "default  {} {} = {}",
            default.object, default.field, default.value
        );
    }
    for finding in &report.findings {
        let at = finding
            .location()
            .map(|l| format!("{path}:{l}: "))
            .unwrap_or_default();
        println!("{at}{finding}");
    }
    if report.is_valid() {
        println!("{path}: valid");
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
