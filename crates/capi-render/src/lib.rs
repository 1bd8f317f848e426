//! Renders the Cluster API and CAPAS objects for a Snow cluster.
//!
//! Pure and deterministic: the same validated cluster spec and release inputs give the same bytes.
//!
//! Status: a skeleton. The templates and the object list arrive with the render issue.
