//! Every bound of the image copy and of the archives read, in one place. docs/reference/limits.md lists them all.
//!
//! A registry that answers slowly or never finishes (a body trickled a byte at a time) must not
//! stall a copy for good: every request has an overall deadline on top of the per-read timeout.

use std::time::Duration;

/// How long connecting to a registry may take (15 s).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// How long one read from a registry connection may wait for data (300 s).
pub const READ_TIMEOUT: Duration = Duration::from_secs(300);

/// The default overall deadline of one registry request other than a blob transfer: a token, a
/// manifest read or write, an existence check, a mount (120 s). Raise with
/// [`CopyLimits::request_deadline`].
pub const REQUEST_DEADLINE: Duration = Duration::from_secs(120);

/// The default slowest blob transfer accepted, in bytes per second (64 KiB/s): a blob of `n`
/// bytes may take [`REQUEST_DEADLINE`] plus `n` / this rate. Lower it with
/// [`CopyLimits::blob_min_bytes_per_second`].
pub const BLOB_MIN_BYTES_PER_SECOND: u64 = 64 << 10;

/// The most entries (files, links, directories) an archive may hold, as a tar or as an unpacked
/// directory (200,000): far above a release's (a few thousand blobs), low enough that a wrong
/// directory (`/`) or a tar of millions of empty members is refused at once instead of walked.
pub const MAX_ARCHIVE_ENTRIES: usize = 200_000;

/// How deep an unpacked archive directory is walked (8; an OCI layout is 3 deep).
pub const MAX_DIR_DEPTH: usize = 8;

/// How deep indexes may nest below an image's top manifest (8): an index of image manifests is
/// depth 1, and no tool writes more than an index of indexes; deeper is refused, naming the
/// chain, instead of copied.
pub const MAX_INDEX_DEPTH: usize = 8;

/// The most layers the images of one `docker save` archive may list together (100,000): real
/// images have at most 127 (overlayfs), a release a few thousand; the manifests made for them
/// stay a few MiB.
pub const MAX_DOCKER_LAYERS: usize = 100_000;

/// The largest executable the controller image is built from (512 MiB; a static release
/// snowctl is under 100 MiB): the image's layer is built in memory.
pub const MAX_IMAGE_BINARY: u64 = 512 << 20;

/// The largest CA certificates file put into the controller image (16 MiB; a distribution's
/// bundle is about 200 KiB).
pub const MAX_IMAGE_CA_CERTIFICATES: u64 = 16 << 20;

/// The deadlines of a copy; [`CopyLimits::default`] holds the constants above.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CopyLimits {
    /// The overall deadline of one request other than a blob transfer.
    pub request_deadline: Duration,
    /// The slowest blob transfer accepted (at least 1 byte per second is used).
    pub blob_min_bytes_per_second: u64,
}

impl Default for CopyLimits {
    fn default() -> Self {
        CopyLimits {
            request_deadline: REQUEST_DEADLINE,
            blob_min_bytes_per_second: BLOB_MIN_BYTES_PER_SECOND,
        }
    }
}

impl CopyLimits {
    /// The overall deadline of copying a blob of `size` bytes (pull and push together).
    pub fn blob_deadline(&self, size: u64) -> Duration {
        let transfer = size / self.blob_min_bytes_per_second.max(1);
        self.request_deadline
            .saturating_add(Duration::from_secs(transfer))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blob_deadlines_grow_with_size() {
        let limits = CopyLimits::default();
        assert_eq!(limits.blob_deadline(0), REQUEST_DEADLINE);
        assert_eq!(
            limits.blob_deadline(1 << 30),
            REQUEST_DEADLINE + Duration::from_secs(16_384)
        );
        let zero_rate = CopyLimits {
            blob_min_bytes_per_second: 0,
            ..limits
        };
        assert_eq!(zero_rate.blob_deadline(u64::MAX), Duration::MAX);
    }
}
