//! Every bound of the credentials crate, in one place. docs/reference/limits.md lists them all.

/// The largest credentials file read (1 MiB; a 64-device file is about 10 KiB).
pub const MAX_CREDENTIALS_BYTES: u64 = 1024 * 1024;

/// The largest CA bundle read (8 MiB; a 64-certificate bundle is about 100 KiB).
pub const MAX_CA_BUNDLE_BYTES: u64 = 8 * 1024 * 1024;

/// The length of a Snow device's access key id (20 characters): a longer value is a finding.
pub const MAX_ACCESS_KEY_ID_CHARS: usize = 20;

/// The length of a Snow device's secret access key (40 characters): a longer value is a
/// finding, which gives its length and never the value.
pub const MAX_SECRET_ACCESS_KEY_CHARS: usize = 40;

/// The most findings of one check each file reports, then one "… and N more" finding: the
/// spec layer's bound, [`snow_api::limits::MAX_FINDINGS_PER_CHECK`].
pub const MAX_FINDINGS_PER_CHECK: usize = snow_api::limits::MAX_FINDINGS_PER_CHECK;

/// The most device IPs one finding lists before "… and N more" (8).
pub const MAX_DEVICES_LISTED: usize = 8;

/// The most certificates read from one CA bundle (256): a Snow bundle holds one per device;
/// past this, `ca-bundle.too-many-certificates` (an error) and the rest is not read.
pub const MAX_CERTIFICATES: usize = 256;
