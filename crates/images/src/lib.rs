//! The images a Snow cluster needs, and a registry-to-registry copy of them for disconnected
//! sites (issue 7).
//!
//! - [`list`]: every image of the selected Kubernetes versions and node OS families, from a
//!   Bundles manifest walked as data plus the EKS-D images kubeadm pulls, deduplicated.
//! - [`copy`]: streams manifests, indexes and blobs from a source registry to a target with
//!   `oci-client`, verifying digests on the way, skipping blobs and manifests the target already
//!   has (so an interrupted run resumes), linux/amd64 only by default.
//!
//! The library never prints: progress goes through [`copy::Progress`].

pub mod copy;
pub mod limits;
pub mod list;

pub use copy::{
    CopyConfig, CopyReport, Credentials, ImageCopy, ImageResult, ImageStatus, NoProgress, Progress,
    TargetRegistry, copy_images, copy_images_with_limits, plan,
};
pub use limits::CopyLimits;
pub use list::{BundleData, ListedImage, OsFamily, Selection, image_list, repository_path};

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
    /// The Docker config file is not JSON.
    #[error("the Docker config file could not be read: {message}")]
    DockerConfig {
        /// The reader's message.
        message: String,
    },
}
