//! The settings of `validate`: the spec read and checked (a spec that cannot be read or parsed is
//! one finding, as `validate` reports it), what preflight reads from the environment and the
//! device files (by flag or environment; missing ones said before any release is fetched), and
//! the release catalog the spec's Kubernetes version is checked against.

use super::{
    Catalog, DeviceFiles, Noted, ReleaseDefault, SettingsError, catalog, read_bytes, registry_env,
};
use crate::{args::ValidateArgs, env::Environment, output};
use snow_api::{Finding, Report, Severity};
use snow_credentials::SecretString;
use snow_provision::validate::{self, Online};
use std::time::Duration;

/// `validate`, resolved from its flags and the environment.
pub struct ValidateSettings {
    /// The spec's name as findings show it (`<stdin>` for `-`).
    pub name: String,
    /// Its text.
    pub text: String,
    /// The static checks' report.
    pub report: Report,
    /// What preflight needs, unless `--offline`.
    pub online: Option<OnlineSettings>,
    /// The catalog the Kubernetes version is checked against, and the severity of a version it
    /// lacks; none for a spec without a version when nothing names a release.
    pub catalog: Option<(Catalog, Severity)>,
}

/// What preflight reads: the mirror's login as the environment gives it, the device files.
pub struct OnlineSettings {
    registry_username: Option<String>,
    registry_password: Option<SecretString>,
    /// The device files.
    pub devices: DeviceFiles,
    timeout: Duration,
    skip_ip_check: bool,
}

impl OnlineSettings {
    /// As `snow_provision::validate` takes it.
    pub fn online(&self) -> Online<'_> {
        Online {
            registry_username: self.registry_username.clone(),
            registry_password: self.registry_password.clone(),
            devices: self.devices.paths(),
            timeout: self.timeout,
            skip_ip_check: self.skip_ip_check,
        }
    }
}

/// A spec `validate` cannot check: one finding, with the text when it was read.
fn unusable(name: &str, text: Option<&str>, finding: Finding) -> SettingsError {
    SettingsError::Diagnostic {
        finding: Box::new(finding),
        about: name.to_owned(),
        text: text.map(str::to_owned),
    }
}

impl ValidateSettings {
    /// From `validate`'s flags. A spec that cannot be read or parsed, or device input missing,
    /// is [`SettingsError::Diagnostic`] (the one finding `validate` reports, in its `-o`);
    /// the catalog's notes are notices.
    pub fn resolve(
        args: &ValidateArgs,
        environment: &Environment,
    ) -> Result<Noted<ValidateSettings>, SettingsError> {
        let name = output::source_name(&args.file);
        let bytes = read_bytes(&args.file).map_err(|err| {
            let finding = Finding::error("input.unreadable", format!("cannot read {name}: {err}"))
                .object(&name)
                .hint("check the path and its permissions; use -f - to read standard input");
            unusable(&name, None, finding)
        })?;
        let text =
            snow_api::decode(&bytes).map_err(|e| unusable(&name, None, e.to_finding(&name)))?;
        let report =
            snow_api::check(text).map_err(|e| unusable(&name, Some(text), e.to_finding(&name)))?;
        let online = (!args.offline).then(|| {
            let (registry_username, registry_password) = registry_env(environment);
            OnlineSettings {
                registry_username,
                registry_password,
                devices: DeviceFiles::resolve(&args.device_files, environment),
                timeout: args.timeout,
                skip_ip_check: args.skip_ip_check,
            }
        });
        // Input missing for the devices is said before any release is fetched.
        if let Some(online) = &online {
            validate::device_input(&report, &online.online())
                .map_err(|finding| unusable(&name, None, *finding))?;
        }
        let catalog = release_catalog(args, &report, environment)?;
        let (catalog, notices) = match catalog {
            Some((Noted { value, notices }, severity)) => (Some((value, severity)), notices),
            None => (None, Vec::new()),
        };
        Ok(Noted {
            value: ValidateSettings {
                name,
                text: text.to_owned(),
                report,
                online,
                catalog,
            },
            notices,
        })
    }
}

/// The catalog the spec's Kubernetes version is checked against, and the severity of a version
/// it lacks. Offline without `--bundles` or `--artifacts`: the embedded sample (a warning, and
/// nothing said on stderr, as the finding names it). Otherwise the release create would use
/// (an error), resolved as create resolves it; none for a spec without a version when nothing
/// names a release (there is nothing to look up).
fn release_catalog(
    args: &ValidateArgs,
    report: &Report,
    environment: &Environment,
) -> Result<Option<(Noted<Catalog>, Severity)>, SettingsError> {
    let release = &args.release;
    let given = release.bundles.is_some() || release.artifacts.is_some();
    let version = (report.spec.as_ref()).and_then(|s| s.cluster.spec.kubernetes_version.as_deref());
    let default = match (args.offline, given) {
        (true, false) => {
            let sample = Catalog::embedded_sample().ok();
            return Ok(sample.map(|catalog| (Noted::quiet(catalog), Severity::Warning)));
        }
        (false, false) if version.is_none() => return Ok(None),
        (true, true) => ReleaseDefault::Sample,
        (false, _) => ReleaseDefault::PublishedOrNewest {
            kube_version: version,
            cache_dir: args.cache_dir.as_deref(),
            ca_certs: &args.ca_certs,
        },
    };
    let catalog = catalog(release, default, environment)?;
    Ok(Some((catalog, Severity::Error)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::{Cli, Command};
    use crate::settings::cluster::tests::spec_file;
    use clap::Parser;

    fn args(line: &[&str]) -> ValidateArgs {
        let mut full = vec!["snowctl", "validate"];
        full.extend(line);
        match Cli::try_parse_from(full).unwrap().command {
            Command::Validate(args) => args,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn offline_checks_against_the_sample_and_reads_no_device_file() {
        let dir = tempfile::tempdir().unwrap();
        let spec = spec_file(dir.path());
        let got = ValidateSettings::resolve(
            &args(&["-f", spec.to_str().unwrap(), "--offline"]),
            &Environment::new(dir.path()),
        )
        .unwrap();
        assert!(got.notices.is_empty());
        assert!(got.value.online.is_none());
        assert!(matches!(got.value.catalog, Some((_, Severity::Warning))));
    }

    #[test]
    fn missing_device_files_are_one_finding_before_any_fetch_and_the_variables_count() {
        let dir = tempfile::tempdir().unwrap();
        let spec = spec_file(dir.path());
        let line = args(&["-f", spec.to_str().unwrap()]);
        let bare = Environment::new(dir.path());
        let Err(SettingsError::Diagnostic { finding, about, .. }) =
            ValidateSettings::resolve(&line, &bare)
        else {
            panic!("not the input finding");
        };
        assert_eq!(finding.check, snow_provision::preflight::INPUT_CHECK);
        assert_eq!(about, spec.display().to_string());
        // The variables name them: the device input is there, and the next step, the release
        // (a Bundles file that is not there: nothing is fetched), is what stops.
        let named = bare
            .with(crate::env::CREDENTIALS_FILE, "c.ini")
            .with(crate::env::CA_BUNDLES_FILE, "b.pem");
        let spec_arg = spec.to_str().unwrap();
        let with_bundles = args(&["-f", spec_arg, "--bundles", "/nonexistent/bundles.yaml"]);
        match ValidateSettings::resolve(&with_bundles, &named) {
            Err(SettingsError::Diagnostic { finding, .. }) => {
                panic!("the variables were not read: {}", finding.message)
            }
            Err(_) => {}
            Ok(_) => panic!("a missing Bundles file was read"),
        }
    }

    #[test]
    fn an_unreadable_spec_is_one_finding() {
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("gone.yaml");
        let got = ValidateSettings::resolve(
            &args(&["-f", gone.to_str().unwrap(), "--offline"]),
            &Environment::new(dir.path()),
        );
        let Err(SettingsError::Diagnostic { finding, .. }) = got else {
            panic!("not a finding");
        };
        assert_eq!(finding.check, "input.unreadable");
    }
}
