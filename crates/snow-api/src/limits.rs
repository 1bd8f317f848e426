//! Every bound of the spec layer, in one place.
//!
//! Input is read from people (a spec file, a SnowIPPool applied with kubectl that the controller
//! reads): each bound keeps a hostile or careless input cheap to answer with a clear error.
//! [`crate::yaml::Budget`] carries the reader's bounds so a caller can raise them; the others are
//! fixed because nothing legitimate comes near them. docs/reference/limits.md lists them all.

/// The largest YAML input read, in bytes (16 MiB). Raise with [`crate::yaml::Budget::max_bytes`].
pub const MAX_INPUT_BYTES: usize = 16 << 20;

/// The most nodes all documents of a stream may hold once aliases are expanded (2,000,000).
pub const MAX_NODES: usize = 2_000_000;

/// The most scalar bytes (keys and values) all documents may hold once aliases are expanded
/// (64 MiB, the bound serde-saphyr applies to the other readers): an alias to a long string
/// costs that string again.
pub const MAX_EXPANDED_BYTES: usize = 64 << 20;

/// The deepest nesting of YAML collections (64).
pub const MAX_DEPTH: usize = 64;

/// The most documents in one YAML stream (10,000).
pub const MAX_DOCUMENTS: usize = 10_000;

/// The most findings one check reports; the rest are counted in one last "… and N more"
/// finding (50).
pub const MAX_FINDINGS_PER_CHECK: usize = 50;

/// The most characters of a user's key or value repeated in a message; longer text is cut and
/// its length given (60).
pub const MAX_SHOWN_CHARS: usize = 60;

/// The longest unknown field name (in bytes) compared with the known names for a "did you mean"
/// suggestion (64); a longer one gets the list of known names instead.
pub const MAX_SUGGESTED_KEY_BYTES: usize = 64;

/// The most characters of a source line a report shows next to a finding (160): a longer line
/// is cut around the finding's column ([`crate::finding::excerpt`]).
pub const MAX_SHOWN_LINE_CHARS: usize = 160;
