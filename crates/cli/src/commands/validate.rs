//! `snowctl validate -f FILE|- [--offline] [-o text|json]`.

use crate::{
    args::{OutputFormat, ValidateArgs},
    exit,
    output::{self, Io},
};
use snow_api::{Finding, InputError};
use std::{io::Read, process::ExitCode};

/// Runs `snowctl validate`.
pub fn run(args: ValidateArgs, io: &mut Io<'_>) -> ExitCode {
    let name = output::source_name(&args.file);
    let bytes = match read_input(&args.file) {
        Ok(bytes) => bytes,
        Err(err) => {
            let finding = Finding::error("input.unreadable", format!("cannot read {name}: {err}"))
                .object(&name)
                .hint("check the path and its permissions; use -f - to read standard input");
            return input_failure(&args, io, &name, None, finding);
        }
    };
    let text = match snow_api::decode(&bytes) {
        Ok(text) => text,
        Err(err) => return input_error(&args, io, &name, None, &err),
    };
    let report = match snow_api::check(text) {
        Ok(report) => report,
        Err(err) => return input_error(&args, io, &name, Some(text), &err),
    };
    if !args.offline {
        let finding = Finding::error(
            "preflight.unavailable",
            "checking the devices needs the preflight support, which this build of snowctl does not have yet",
        )
        .hint("run `snowctl validate --offline -f FILE` for the static checks");
        return input_failure(&args, io, &name, None, finding);
    }
    match args.output {
        OutputFormat::Json => {
            let mut extra = serde_json::Map::new();
            extra.insert(
                "defaults".into(),
                serde_json::to_value(&report.defaults).unwrap_or_default(),
            );
            io.out(&output::findings_json(&report.findings, extra));
        }
        OutputFormat::Text => {
            let mut text_out = output::findings_text(&report.findings, &name, Some(text));
            if !report.defaults.is_empty() {
                let mut defaults = String::from("Defaults applied:\n");
                for d in &report.defaults {
                    defaults.push_str(&format!("  {} {} = {}\n", d.object, d.field, d.value));
                }
                // The summary line stays last.
                let summary_at = text_out.trim_end().rfind('\n').map_or(0, |i| i + 1);
                text_out.insert_str(summary_at, &defaults);
            }
            io.out(&text_out);
        }
    }
    exit::for_findings(&report.findings)
}

fn read_input(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    // Far above any cluster spec; keeps a mistaken `-f /dev/zero` from eating memory.
    const LIMIT: u64 = 64 << 20;
    let mut bytes = Vec::new();
    if path.as_os_str() == "-" {
        std::io::stdin().take(LIMIT).read_to_end(&mut bytes)?;
    } else {
        std::fs::File::open(path)?
            .take(LIMIT)
            .read_to_end(&mut bytes)?;
    }
    Ok(bytes)
}

/// Reports input that could not be read as YAML: JSON on stdout, or a snippet on stderr.
fn input_error(
    args: &ValidateArgs,
    io: &mut Io<'_>,
    name: &str,
    text: Option<&str>,
    err: &InputError,
) -> ExitCode {
    let check = match err {
        InputError::NotText { .. } => "input.not-text",
        InputError::Yaml(snow_api::yaml::YamlError::Syntax { .. }) => "yaml.syntax",
        InputError::Yaml(_) => "yaml.budget",
    };
    let mut finding = Finding::error(check, err.to_string())
        .object(name)
        .hint(err.hint());
    if let Some(at) = err.location() {
        finding = finding.at(at);
    }
    input_failure(args, io, name, text, finding)
}

fn input_failure(
    args: &ValidateArgs,
    io: &mut Io<'_>,
    name: &str,
    text: Option<&str>,
    finding: Finding,
) -> ExitCode {
    match args.output {
        OutputFormat::Json => io.out(&output::findings_json(&[finding], serde_json::Map::new())),
        OutputFormat::Text => io.err(&output::diagnostic(&finding, name, text)),
    }
    ExitCode::from(exit::USAGE)
}
