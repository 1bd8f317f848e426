//! Nothing here: the benchmarks are the `[[bench]]` targets of this package.
