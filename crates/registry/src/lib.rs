//! A read-only OCI registry serving snowctl's image archive (`snowctl download artifacts`, its
//! unpacked directory, or any OCI image layout or `docker save` archive) over HTTPS: the mirror a
//! disconnected Snow site's nodes pull from, in place of Harbor.
//!
//! - [`serve`]: the pull side of the OCI Distribution API (`/v2/`, manifests and blobs by tag
//!   and digest with GET and HEAD, tag lists), the stored bytes with their stored media type,
//!   `Docker-Content-Digest` and `Content-Length`, Range on blobs, the spec's JSON errors; a
//!   push or delete is answered `405 UNSUPPORTED`. Blobs are read from the tar by offset, never
//!   unpacked, and nothing is written but the certificate files of [`tls`].
//! - Names as nodes ask through a mirror ([`names`]): containerd's `?ns=<registry>` and EKS
//!   Anywhere's `override_path` namespaces (`/v2/<namespace>/<path>`), or images rewritten to the
//!   mirror's host (no `ns`: [`names::DEFAULT_REGISTRY`]).
//! - [`tls`]: the serving certificate from files, or made with a CA of its own (IP SANs) and
//!   kept in a state directory; [`tls::mirror_configuration`] prints the CA as the spec's
//!   `caCertContent` wants it.
//! - `/metrics`: requests, bytes sent and misses in Prometheus' text format.
//! - Bounds ([`Limits`]): connections at once, handshake and request-head time, idle time;
//!   memory per connection is one chunk ([`CHUNK`]) whatever the archive's size.

mod catalog;
mod http;
mod metrics;
pub mod names;
mod server;
pub mod tls;

pub use http::{CHUNK, MAX_TAGS};
pub use names::Namespaces;
pub use server::{
    HEADER_TIMEOUT, IDLE_TIMEOUT, Limits, MAX_CONNECTIONS, MAX_HEAD_BYTES, RegistryError, Running,
    ServeOptions, serve,
};
pub use tls::{CertificateSource, TlsError};
