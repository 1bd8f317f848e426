//! The command line's integration tests, as one test binary (each binary links the whole
//! dependency tree, so one instead of eleven saves most of the link time). Each module drives the
//! real `snowctl` binary.

mod controller_binary;
mod credentials;
mod devices;
mod download;
mod e2e_management;
mod hostile;
mod import_images;
mod init;
mod lifecycle;
mod move_cluster;
mod preflight;
mod render;
mod scoped_user;
mod self_managed;
mod spec_commands;
