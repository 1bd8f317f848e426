//! The settings of `render` (and of `create cluster --dry-run`, which renders what create would
//! apply): the spec, the release catalog read now (no management cluster is asked), the render
//! flags and `--existing`'s objects as written.

use super::{
    Noted, Notice, ReleaseDefault, RenderFlags, RenderInputs, SettingsError, catalog_source,
    fetch_catalog, load_spec, read_text,
};
use crate::{args::RenderArgs, env::Environment, output};
use snow_api::ValidSpec;
use std::path::{Path, PathBuf};

/// `render`, resolved from its flags and the environment.
pub struct RenderSettings {
    /// The spec, checked.
    pub spec: ValidSpec,
    /// The catalog, `--contract`, the identity Secret's files, the mirror's login.
    pub inputs: RenderInputs,
    /// `--existing`: the file's name and its text, for an upgrade's plan.
    pub existing: Option<(String, String)>,
}

impl RenderSettings {
    /// From `render`'s flags (`existing`: `--existing`): on the embedded sample catalog unless a
    /// release is named, or with `published` (`create cluster --dry-run`: its `--cache-dir` and
    /// `--ca-cert`) on the published release `create` would use. The catalog's notes, then the
    /// default SSH key's, as notices.
    pub fn resolve(
        args: &RenderArgs,
        existing: Option<&Path>,
        published: Option<(Option<&Path>, &[PathBuf])>,
        environment: &Environment,
    ) -> Result<Noted<RenderSettings>, SettingsError> {
        let spec = load_spec(&args.file, environment)?.spec;
        let default = match published {
            None => ReleaseDefault::Sample,
            Some((cache_dir, ca_certs)) => ReleaseDefault::Published {
                kube_version: Some(spec.kubernetes_version()),
                cache_dir,
                ca_certs,
            },
        };
        let source = catalog_source(&args.release, default, environment)?;
        let flags = RenderFlags::resolve(args, &spec, environment)?;
        let mut inputs = flags.with_catalog(fetch_catalog(source)?);
        let mut notices = std::mem::take(&mut inputs.notices);
        if let Some(note) = snow_provision::default_key_note(&spec) {
            notices.push(Notice::Note(format!("note: {note}\n")));
        }
        let existing = match existing {
            Some(path) => read_text(path, "the existing objects")
                .map(|text| (output::source_name(path), text))
                .map(Some),
            None => Ok(None),
        };
        let existing = existing.map_err(|e| e.after(notices.clone()))?;
        Ok(Noted {
            value: RenderSettings {
                spec,
                inputs,
                existing,
            },
            notices,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::{Cli, Command};
    use clap::Parser;

    fn render_args(line: &[&str]) -> RenderArgs {
        let mut full = vec!["snowctl", "render"];
        full.extend(line);
        match Cli::try_parse_from(full).unwrap().command {
            Command::Render(args) => args.render,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_sample_catalog_is_noted_and_device_files_come_from_the_environment() {
        let dir = tempfile::tempdir().unwrap();
        let spec = crate::settings::cluster::tests::spec_file(dir.path());
        let args = render_args(&["-f", spec.to_str().unwrap()]);
        // No device files anywhere: the identity Secret is left out, and said so.
        let bare = Environment::new(dir.path());
        let got = RenderSettings::resolve(&args, None, None, &bare).unwrap();
        let notes: Vec<String> = (got.notices.iter())
            .filter_map(|n| match n {
                Notice::Note(text) => Some(text.clone()),
                _ => None,
            })
            .collect();
        assert!(notes[0].contains("embedded sample catalog"), "{notes:?}");
        assert!(
            notes
                .iter()
                .any(|n| n.contains("identity Secret is left out")),
            "{notes:?}"
        );
        // The variables name missing files: reading them is the error (before anything renders).
        let missing = dir.path().join("missing");
        let named = bare
            .with(crate::env::CREDENTIALS_FILE, missing.to_str().unwrap())
            .with(crate::env::CA_BUNDLES_FILE, missing.to_str().unwrap());
        let Err(SettingsError::DeviceFile { what, .. }) =
            RenderSettings::resolve(&args, None, None, &named)
        else {
            panic!("the variables' files were not read");
        };
        assert!(what.contains("missing"), "{what}");
    }

    #[test]
    fn an_unreadable_existing_file_is_said_after_the_catalog_note() {
        let dir = tempfile::tempdir().unwrap();
        let spec = crate::settings::cluster::tests::spec_file(dir.path());
        let args = render_args(&["-f", spec.to_str().unwrap(), "--no-secrets"]);
        let gone = dir.path().join("gone.yaml");
        let got = RenderSettings::resolve(&args, Some(&gone), None, &Environment::new(dir.path()));
        let Err(SettingsError::Noted { notices, error }) = got else {
            panic!("not an error after notices");
        };
        assert!(matches!(&notices[0], Notice::Note(n) if n.contains("sample")));
        let SettingsError::Usage(message) = *error else {
            panic!("not a usage error");
        };
        assert!(
            message.starts_with("cannot read the existing objects"),
            "{message}"
        );
    }
}
