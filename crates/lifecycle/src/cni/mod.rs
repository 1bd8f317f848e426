//! The cluster's CNI (Cilium): rendering its manifest.

pub mod helm;
