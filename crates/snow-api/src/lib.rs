//! EKS Anywhere Snow API types and the spec layer of snowctl.
//!
//! No IO and no async: callers hand in text and get back values and findings.

pub mod crd;
pub mod device;
pub mod finding;
pub mod types;
pub mod yaml;

pub use crd::Kind;
pub use device::{DeviceIp, InvalidDeviceIp};
pub use finding::{Finding, Location, Severity, has_errors};
