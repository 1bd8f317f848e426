//! The settings of `download artifacts` and `import-images`: the images of the selection (named,
//! or the release bundle's for the Kubernetes versions and OS families), how registries are
//! reached, and what goes into an archive besides the images or where images go.

use super::{
    Catalog, Noted, SettingsError, ca_certs, fetch_components, image_selection, read_text,
    registry_access, selection_catalog, user_images,
};
use crate::{
    args::{DownloadArtifactsArgs, ImportImagesArgs},
    env::Environment,
    output::printable_lines,
};
use snow_api::release::ReleaseInputs;
use snow_images::{
    Archive, ArchiveFile, CopyConfig, FromArchive, ListedImage, Platforms, TargetRegistry,
    controller_image::controller_image_name,
};
use std::sync::Arc;

/// The images `--image`/`--images-file` name, else the selection's from the release catalog,
/// with its notices.
fn selected_images(
    args: &crate::args::ImageSelectionArgs,
    catalog: impl FnOnce() -> Result<Noted<Catalog>, SettingsError>,
) -> Result<Noted<Vec<ListedImage>>, SettingsError> {
    if let Some(images) = user_images(args)? {
        return Ok(Noted::quiet(images));
    }
    let Noted { value, notices } = catalog()?;
    let images = image_selection(args, &value).map_err(|e| e.after(notices.clone()))?;
    Ok(Noted {
        value: images,
        notices,
    })
}

/// `download artifacts`, resolved from its flags and the environment.
pub struct DownloadArtifactsSettings {
    /// `--platform`.
    pub platforms: Platforms,
    /// The images to download.
    pub images: Vec<ListedImage>,
    /// `--controller-image-archive`'s controller image.
    pub from_archives: Vec<FromArchive>,
    /// The manifests stored beside the images.
    pub files: Vec<ArchiveFile>,
    /// `--ca-cert`'s PEM certificates.
    pub ca_certs_pem: Vec<Vec<u8>>,
    /// The Docker config's credentials.
    pub credentials: snow_images::Credentials,
}

impl DownloadArtifactsSettings {
    /// From `download artifacts`' flags: the release catalog read and, without
    /// `--no-components`, the management components and Flux's install manifest fetched (or
    /// taken from the cache), each said as notices.
    pub fn resolve(
        args: &DownloadArtifactsArgs,
        environment: &Environment,
    ) -> Result<Noted<DownloadArtifactsSettings>, SettingsError> {
        let platforms = Platforms::parse(&args.platforms)
            .map_err(|e| SettingsError::Usage(format!("--platform: {e}")))?;
        let Noted {
            value: catalog,
            mut notices,
        } = selection_catalog(
            &args.selection,
            args.cache_dir.as_deref(),
            &args.source.ca_certs,
            environment,
        )?;
        let resolved = (|| {
            let images = match user_images(&args.selection)? {
                Some(images) => images,
                None => image_selection(&args.selection, &catalog)?,
            };
            let from_archives = controller_image(args)?;
            let mut files =
                snow_images::archive::release_files(&catalog.bundles, &catalog.eksd, &images);
            if !args.no_components {
                let components = components(args, &catalog.inputs, environment)?;
                notices.extend(components.notices);
                files.extend(components.value);
            }
            let (ca_certs_pem, credentials) = registry_access(&args.source, environment)?;
            Ok(DownloadArtifactsSettings {
                platforms,
                images,
                from_archives,
                files,
                ca_certs_pem,
                credentials,
            })
        })();
        match resolved {
            Ok(value) => Ok(Noted { value, notices }),
            Err(e) => Err(SettingsError::after(e, notices)),
        }
    }
}

/// The management components and Flux's install manifest (Flux's release file, the bundle
/// naming only Flux's version) of every selected Kubernetes version's bundle, fetched (or taken
/// from the cache), for `snowctl init --artifacts` and GitOps offline.
fn components(
    args: &DownloadArtifactsArgs,
    inputs: &ReleaseInputs,
    environment: &Environment,
) -> Result<Noted<Vec<ArchiveFile>>, SettingsError> {
    let versions = match args.selection.kubernetes_versions.as_slice() {
        [] => inputs.bundles.kube_versions(),
        some => some.to_vec(),
    };
    let usage = |e: snow_api::release::ReleaseError| SettingsError::Usage(e.to_string());
    let mut wanted = Vec::new();
    for version in versions {
        let bundle = inputs.bundles.versions_bundle(&version).map_err(usage)?;
        wanted.extend(snow_api::release::management_components(bundle).map_err(usage)?);
        let flux = snow_api::release::flux_install_asset(bundle, snow_api::release::FLUX_RELEASES);
        wanted.extend(flux.map_err(usage)?);
    }
    let mut seen = std::collections::HashSet::new();
    wanted.retain(|a| seen.insert(a.clone()));
    let pems = ca_certs(&args.source.ca_certs)?;
    let files = fetch_components(&wanted, args.cache_dir.as_deref(), pems, environment)?;
    Ok(Noted {
        value: snow_images::assets::archive_files(&wanted, &files.value),
        notices: files.notices,
    })
}

/// The controller image of `--controller-image-archive FILE`, which must hold this snowctl's
/// `snowctl/controller:v<version>`.
fn controller_image(args: &DownloadArtifactsArgs) -> Result<Vec<FromArchive>, SettingsError> {
    let Some(path) = &args.controller_image_archive else {
        return Ok(Vec::new());
    };
    let usage = |why: String| SettingsError::Usage(printable_lines(&why));
    let archive =
        Archive::open(path).map_err(|e| usage(format!("--controller-image-archive: {e}")))?;
    let name = controller_image_name();
    let held: Vec<String> = (archive.images().iter())
        .map(|i| i.name.clone().unwrap_or_else(|| "(no name)".into()))
        .collect();
    FromArchive::new(Arc::new(archive), &name)
        .map(|from| vec![from])
        .map_err(|_| {
            usage(format!(
                "--controller-image-archive: {} holds {}, not {name} (this snowctl's): build it from this snowctl with scripts/build-controller-image",
                path.display(),
                if held.is_empty() { "no image".to_owned() } else { held.join(", ") },
            ))
        })
}

/// `import-images`, resolved from its flags and the environment.
pub enum ImportImagesSettings {
    /// `--from FILE`: the archive, opened.
    FromArchive {
        /// The archive.
        archive: Box<Archive>,
        /// Where its images go; none with `--list`.
        config: Option<CopyConfig>,
    },
    /// The images of the selection, from their registries.
    Images {
        /// The images.
        images: Vec<ListedImage>,
        /// Where they go; none with `--list`.
        config: Option<CopyConfig>,
    },
}

impl ImportImagesSettings {
    /// From `import-images`' flags: the target registry first (a copy needs it, and it is said
    /// before any fetch), then the images.
    pub fn resolve(
        args: &ImportImagesArgs,
        environment: &Environment,
    ) -> Result<Noted<ImportImagesSettings>, SettingsError> {
        if let Some(path) = &args.from {
            let archive = Archive::open(path)
                .map_err(|e| SettingsError::Archive(printable_lines(&e.to_string())))?;
            let config = match args.list {
                true => None,
                false => Some(copy_config(args, environment)?),
            };
            let archive = Box::new(archive);
            return Ok(Noted::quiet(ImportImagesSettings::FromArchive {
                archive,
                config,
            }));
        }
        let config = match args.list {
            true => None,
            false => Some(copy_config(args, environment)?),
        };
        let catalog =
            || selection_catalog(&args.selection, None, &args.source.ca_certs, environment);
        let Noted { value, notices } = selected_images(&args.selection, catalog)?;
        Ok(Noted {
            value: ImportImagesSettings::Images {
                images: value,
                config,
            },
            notices,
        })
    }
}

/// How to reach the target registry `--registry` and the sources.
fn copy_config(
    args: &ImportImagesArgs,
    environment: &Environment,
) -> Result<CopyConfig, SettingsError> {
    let verb = match args.from.is_some() {
        true => "import",
        false => "copy",
    };
    let Some(registry) = &args.registry else {
        return Err(SettingsError::Usage(format!(
            "--registry HOST:PORT[/NAMESPACE] is required to {verb} (or --list)"
        )));
    };
    let target = TargetRegistry::parse(registry).map_err(|e| {
        let what = format!("--registry: {e}");
        match e {
            snow_images::ImagesError::RegistryLogin { .. } => SettingsError::Hinted {
                what,
                hint: "give the login with --username USER --password-stdin".into(),
            },
            _ => SettingsError::Usage(what),
        }
    })?;
    let (ca_certs_pem, mut credentials) = registry_access(&args.source, environment)?;
    if let (Some(user), true) = (&args.username, args.password_stdin) {
        // Bounded like every input (read_bytes): stdin may be endless.
        let password = read_text(std::path::Path::new("-"), "the password from")?;
        let password = password.trim_end_matches(['\r', '\n']).to_owned();
        credentials.insert(&target.host, user.clone(), password);
    }
    let source = &args.source.source_registry;
    let mut plain_http: Vec<String> = source
        .iter()
        .filter(|_| args.source.source_insecure)
        .cloned()
        .collect();
    if args.insecure {
        plain_http.push(target.host.clone());
    }
    Ok(CopyConfig {
        target,
        source_registry: source.clone(),
        all_platforms: args.all_platforms,
        concurrency: usize::from(args.source.concurrency),
        ca_certs_pem,
        plain_http,
        credentials,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::{Cli, Command, DownloadCommand};
    use clap::Parser;

    fn import_images(line: &[&str]) -> ImportImagesArgs {
        let mut full = vec!["snowctl", "import-images"];
        full.extend(line);
        match Cli::try_parse_from(full).unwrap().command {
            Command::ImportImages(args) => args,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_copy_without_a_registry_is_refused_before_anything_is_fetched() {
        let dir = tempfile::tempdir().unwrap();
        let got = ImportImagesSettings::resolve(
            &import_images(&["--kubernetes-version", "1.33"]),
            &Environment::new(dir.path()),
        );
        let Err(SettingsError::Usage(message)) = got else {
            panic!("not a usage error");
        };
        assert_eq!(
            message,
            "--registry HOST:PORT[/NAMESPACE] is required to copy (or --list)"
        );
    }

    #[test]
    fn named_images_need_no_catalog_and_docker_config_comes_from_the_environment() {
        let dir = tempfile::tempdir().unwrap();
        let line = [
            "--image",
            "public.ecr.aws/a/b:v1",
            "--registry",
            "127.0.0.1:5000",
        ];
        // DOCKER_CONFIG names a directory whose config.json is not JSON: it is read, and refused.
        let docker = dir.path().join("docker");
        std::fs::create_dir(&docker).unwrap();
        std::fs::write(docker.join("config.json"), "{not json").unwrap();
        let environment =
            Environment::new(dir.path()).with(crate::env::DOCKER_CONFIG, docker.to_str().unwrap());
        let got = ImportImagesSettings::resolve(&import_images(&line), &environment);
        assert!(matches!(got, Err(SettingsError::Usage(m)) if m.contains("config.json")));
        // Without it: the one image named, and nothing said.
        let got =
            ImportImagesSettings::resolve(&import_images(&line), &Environment::new(dir.path()))
                .unwrap();
        assert!(got.notices.is_empty());
        let ImportImagesSettings::Images { images, config } = got.value else {
            panic!("not images");
        };
        assert_eq!(images.len(), 1);
        assert_eq!(config.unwrap().target.host, "127.0.0.1:5000");
    }

    #[test]
    fn download_refuses_a_bad_platform_first() {
        let dir = tempfile::tempdir().unwrap();
        let line = [
            "snowctl",
            "download",
            "artifacts",
            "--output-file",
            "a.tar",
            "--platform",
            "nope",
        ];
        let Command::Download(DownloadCommand::Artifacts(args)) =
            Cli::try_parse_from(line).unwrap().command
        else {
            panic!("not download");
        };
        let got = DownloadArtifactsSettings::resolve(&args, &Environment::new(dir.path()));
        assert!(matches!(got, Err(SettingsError::Usage(m)) if m.starts_with("--platform: ")));
    }
}
