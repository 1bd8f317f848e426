//! Every bound of the device clients, in one place. docs/reference/limits.md lists them all.
//!
//! The defaults of [`crate::ClientConfig`] and [`crate::RetryPolicy`] are these constants; a
//! caller raises a timeout through those structs. The response-size bound is fixed: no Device API
//! answer comes near it.

use std::time::Duration;

/// The default TCP connect timeout of a device request (3 s): [`crate::ClientConfig::connect_timeout`].
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// The default whole-request timeout, TLS handshake and answer included (10 s):
/// [`crate::ClientConfig::request_timeout`].
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// The default attempts per request, the first included (4): [`crate::RetryPolicy::max_attempts`].
pub const MAX_ATTEMPTS: u32 = 4;

/// The largest Snowball Device API or IAM response body read (4 MiB); a larger answer is a
/// protocol error naming this bound. The real answers are a few KiB.
pub const MAX_RESPONSE_BYTES: usize = 4 << 20;

/// The most instance types one finding lists before "and N more" (12).
pub const MAX_INSTANCE_TYPES_LISTED: usize = 12;

/// Pages read at most from one paginated listing (DescribeInstances, DescribeInstanceTypes,
/// DescribeDirectNetworkInterfaces, IAM ListAccessKeys and ListUserPolicies), so a looping token
/// cannot hang a run.
pub const MAX_PAGES: usize = 100;
