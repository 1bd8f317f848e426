//! The command line's integration tests, as one test binary (each binary links the whole
//! dependency tree, so one instead of eleven saves most of the link time). Each module drives the
//! real `snowctl` binary.

mod controller_binary;
mod controller_image;
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

/// Bytes a process wrote, as text.
fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A finished command's exit code, stdout and stderr, for an assertion's message.
fn show(out: &std::process::Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status.code(),
        text(&out.stdout),
        text(&out.stderr)
    )
}
