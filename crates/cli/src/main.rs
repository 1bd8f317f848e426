//! The `snowctl` binary: everything lives in the `snowctl` library so other tools can call it.

fn main() -> std::process::ExitCode {
    snowctl::run()
}
