//! Load a cluster spec from a path and print its findings.
fn main() {}
