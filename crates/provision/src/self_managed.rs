//! The first cluster from nothing.
