//! The images a Snow cluster needs, and a registry-to-registry copy of them for disconnected
//! sites (issue 7).
//!
//! - [`list`]: every image of the selected Kubernetes versions and node OS families, from a
//!   Bundles manifest walked as data plus the EKS-D images kubeadm pulls, deduplicated.
//! - [`copy`]: streams manifests, indexes and blobs from a source registry to a target with
//!   `oci-client`, verifying digests on the way, skipping blobs and manifests the target already
//!   has (so an interrupted run resumes), linux/amd64 only by default.
//!
//! - [`download`]: streams the images from their registries into one archive, an OCI image
//!   layout in a tar ([`layout`] describes it and how an interrupted download resumes).
//! - [`archive`] and [`import`]: read such an archive (or a `docker save` one) in place and push
//!   its images to the site registry, blobs first and tags last.
//!
//! - [`assets`]: the management components' manifests the Bundles name, fetched over HTTPS into
//!   a cache keyed by sha256, stored in and read from the archive.
//! - [`charts`]: Helm charts taken out of an archive into temporary files `helm template` reads.
//!
//! - [`controller_image`]: the snowctl controller's FROM-scratch image (a static executable, CA
//!   certificates, a non-root user), built without a container runtime into an archive of the
//!   same layout, reproducibly.
//!
//! - [`probe`]: whether a registry mirror answers `GET /v2/` over HTTPS, checked against the
//!   spec's `caCertContent` (refused, a timeout and the certificate's problem said as data).
//!
//! The library never prints: progress goes through [`copy::Progress`]; [`printable`] escapes
//! what an archive or a registry said before a tool shows it.

pub mod archive;
pub mod assets;
pub mod charts;
pub mod controller_image;
pub mod copy;
pub mod download;
// The fuzz targets' bodies: public only for `fuzz/` (a separate package) and this crate's
// never-panic tests, not API (hidden from the docs; a feature would make every test build
// select it).
#[doc(hidden)]
pub mod fuzz;
pub mod import;
pub mod layout;
pub mod limits;
pub mod list;
pub mod platform;
pub mod probe;
mod registry;
mod shown;
pub mod support_archive;
mod tar;
pub mod transfer;

pub use archive::{Archive, ArchiveError, ArchiveFormat, ArchiveImage, BlobBytes, BlobReader};
pub use download::{
    DownloadConfig, DownloadError, DownloadReport, FromArchive, download_images,
    download_images_with_limits, plan_download,
};
pub use import::{import_archive, import_archive_with_limits, plan_import};
pub use layout::{ArchiveFile, ArchiveSummary, IndexEntry, partial_path};

pub use copy::{
    CopyConfig, CopyReport, Credentials, ImageCopy, ImageResult, ImageStatus, NoProgress, Progress,
    TargetRegistry, copy_images, copy_images_with_limits, plan,
};
pub use limits::CopyLimits;
pub use list::{BundleData, ListedImage, Selection, image_list, repository_path};
pub use platform::{Platform, Platforms};
pub use shown::printable;

/// Why images could not be listed or a copy could not be set up. Failures of single images
/// during a copy are in the [`CopyReport`] instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImagesError {
    /// The Bundles manifest could not be read.
    #[error("the Bundles manifest could not be read: {message}")]
    Bundles {
        /// The reader's message.
        message: String,
    },
    /// A Kubernetes version the bundle does not have.
    #[error("the release bundle has no Kubernetes {version}; available: {}", available.join(", "))]
    NoSuchVersion {
        /// The version asked for.
        version: String,
        /// The versions the bundle has.
        available: Vec<String>,
    },
    /// `--registry` is not `HOST[:PORT][/NAMESPACE]`.
    #[error("`{registry}` is not HOST[:PORT][/NAMESPACE]")]
    InvalidRegistry {
        /// What was given.
        registry: String,
    },
    /// The registry is written with a login in it (`user:password@host`): the password would
    /// travel in every image reference and error. Only the host is kept, to say which.
    #[error(
        "the registry {host} is written with a login (user:password@ before the host): give the registry as HOST[:PORT][/NAMESPACE] and its login apart"
    )]
    RegistryLogin {
        /// The registry without its login.
        host: String,
    },
    /// An image URI has no tag.
    #[error("image {image} has no tag")]
    Untagged {
        /// The URI.
        image: String,
    },
    /// A source or target reference is not a valid image reference.
    #[error("invalid image reference {reference}: {message}")]
    InvalidReference {
        /// The reference.
        reference: String,
        /// The parser's message.
        message: String,
    },
    /// A platform is not `OS/ARCH[/VARIANT]`.
    #[error("`{platform}` is not a platform: write OS/ARCH[/VARIANT], e.g. linux/amd64, or `all`")]
    InvalidPlatform {
        /// What was given.
        platform: String,
    },
    /// An image of an archive has no name to push it under.
    #[error(
        "image {position} of {archive} ({digest}) has no name (no org.opencontainers.image.ref.name annotation): snowctl cannot tell where to push it"
    )]
    Unnamed {
        /// The archive.
        archive: String,
        /// Its position in index.json or manifest.json.
        position: usize,
        /// Its digest.
        digest: String,
    },
    /// An image asked for is not in the archive.
    #[error("{image} is not in {archive}")]
    NotInArchive {
        /// The image.
        image: String,
        /// The archive.
        archive: String,
    },
    /// The Docker config file is not JSON.
    #[error("the Docker config file could not be read: {message}")]
    DockerConfig {
        /// The reader's message.
        message: String,
    },
}
