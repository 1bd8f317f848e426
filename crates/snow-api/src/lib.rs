//! EKS Anywhere Snow API types and the spec layer of snowctl.
//!
//! No IO and no async: callers hand in text and get back values and findings.
//!
//! ```
//! let report = snow_api::check("kind: Cluster\n").unwrap();
//! assert!(!report.is_valid());
//! for finding in &report.findings {
//!     println!("{finding}");
//! }
//! ```
//!
//! The pipeline is [`ClusterSpec::parse`] (strict typing against the CRD schemas, every unknown
//! field and wrong type reported with its line and column), [`ClusterSpec::apply_defaults`]
//! (EKS Anywhere's defaults, returned so callers can show them) and [`ClusterSpec::validate`]
//! (every static rule, all findings at once). [`check`] runs all three; [`Report::into_valid`]
//! turns a spec without error findings into a [`ValidSpec`], the only spec rendering and the
//! lifecycle accept. [`release`] holds the release catalog and resolves it per cluster.
//!
//! k8s-openapi needs one Kubernetes version feature in the final binary; this crate selects none
//! (its tests use `latest`).

pub mod admission;
mod check;
pub mod cni;
pub mod crd;
pub mod defaults;
pub mod device;
pub mod duration;
mod error_chain;
pub mod finding;
pub mod finding_text;
pub mod gitops;
// The fuzz targets' bodies: public only for `fuzz/` (a separate package) and this crate's
// never-panic tests, not API (hidden from the docs; a feature would make every test build
// select it).
#[doc(hidden)]
pub mod fuzz;
pub mod immutable;
pub mod limits;
pub mod mirror;
pub mod names;
mod os;
pub mod redact;
pub mod release;
pub mod spec;
pub mod template;
pub mod types;
pub mod typing;
pub mod validate;
pub mod walk;
pub mod yaml;

pub use check::{Report, ValidSpec, check};
pub use crd::{Kind, crds, crds_yaml};
pub use defaults::AppliedDefault;
pub use device::{DeviceIp, InvalidDeviceIp};
pub use duration::{DurationError, GoDuration, short_duration};
pub use error_chain::error_chain;
pub use finding::{Finding, Location, Severity, has_errors};
pub use os::OsFamily;
pub use spec::{ClusterSpec, InputError, Parsed, decode};
