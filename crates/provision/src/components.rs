//! The provider stack `init` installs, ready to apply: the bundle of a Kubernetes version (the
//! newest without one), its components manifests from a directory laid out like clusterctl's
//! local repository, an offline archive, or fetched over HTTPS into a cache
//! (`snow_images::assets`), with the device files' encodings and the given environment as the
//! values substituted (`snow_lifecycle::init`).

use snow_api::release::ReleaseInputs;
use snow_credentials::{CaBundle, ClusterctlEnv, CredentialsFile};
use snow_images::{
    Archive, ArchiveError,
    assets::{self, AssetsError, FetchConfig},
};
use snow_lifecycle::{
    LifecycleError,
    init::{self, components::ComponentObjects, source},
};
use std::{collections::BTreeMap, path::Path};

/// Where the components manifests come from.
pub enum ComponentsSource<'a> {
    /// A directory `DIR/<provider>/<version>/<file>`.
    Dir(&'a Path),
    /// An archive `snowctl download artifacts` wrote.
    Archive(&'a Path),
    /// That archive, opened already (the one the release catalog was read from,
    /// [`crate::catalog::Catalog::archive`]): not opened again.
    Opened(&'a Archive),
    /// The bundle's URIs over HTTPS, through a cache.
    Fetch(FetchConfig),
}

/// What the stack is made of.
pub struct ComponentsOptions<'a> {
    /// The release catalog.
    pub inputs: &'a ReleaseInputs,
    /// The bundle's Kubernetes version; `None` takes the newest.
    pub kubernetes_version: Option<&'a str>,
    /// The device files, for the encodings CAPAS reads (none without them).
    pub secrets: Option<(&'a CredentialsFile, &'a CaBundle)>,
    /// The environment's variables, substituted into the manifests as clusterctl does.
    pub environment: BTreeMap<String, String>,
    /// Where the manifests come from.
    pub source: ComponentsSource<'a>,
}

/// The stack, with how its files were found.
#[derive(Debug)]
pub struct Components {
    /// Each component's objects, in install order.
    pub objects: Vec<ComponentObjects>,
    /// With [`ComponentsSource::Fetch`]: files fetched over the network and read from the cache.
    pub fetched: Option<(usize, usize)>,
}

/// Why the stack could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ComponentsError {
    /// The bundle, a directory's files, or the manifests themselves.
    #[error(transparent)]
    Lifecycle(#[from] LifecycleError),
    /// The archive cannot be read.
    #[error(transparent)]
    Archive(#[from] ArchiveError),
    /// Files missing from the archive, or that could not be fetched.
    #[error(transparent)]
    Assets(#[from] AssetsError),
}

impl ComponentsError {
    /// Whether the input given (an archive, a directory, the manifests) cannot be used, as
    /// opposed to a fetch that failed.
    pub fn is_input(&self) -> bool {
        match self {
            ComponentsError::Archive(_) => true,
            ComponentsError::Assets(e) => !matches!(e, AssetsError::Fetch(_)),
            ComponentsError::Lifecycle(e) => e.is_input(),
        }
    }
}

/// The provider stack of `options`, ready to apply.
pub async fn components(options: ComponentsOptions<'_>) -> Result<Components, ComponentsError> {
    let bundle = source::versions_bundle(&options.inputs.bundles, options.kubernetes_version)?;
    let credentials = options.secrets.map(|(c, b)| ClusterctlEnv::new(c, b));
    let values = init::snow_values(bundle, credentials.as_ref(), options.environment);
    let wanted = source::wanted(bundle)?;
    let mut fetched = None;
    let files = match &options.source {
        ComponentsSource::Dir(dir) => source::read_dir(dir, &wanted)?,
        ComponentsSource::Archive(file) => {
            let archive = Archive::open(file)?;
            assets::from_archive(&archive, &wanted)?
        }
        ComponentsSource::Opened(archive) => assets::from_archive(archive, &wanted)?,
        ComponentsSource::Fetch(config) => {
            let got = assets::fetch_components(&wanted, config).await?;
            fetched = Some((got.fetched, got.cached));
            got.files
        }
    };
    let sources = source::from_files(&wanted, files)?;
    Ok(Components {
        objects: init::prepare(&sources, &values)?,
        fetched,
    })
}
