//! One module per command.

pub mod cluster;
pub mod completion;
pub mod controller;
pub mod crds;
pub mod credentials;
pub mod generate;
pub mod import_images;
pub mod render;
pub mod validate;

use crate::{
    args::{Cli, Command},
    output::Io,
};
use std::process::ExitCode;

/// Runs a parsed command line, writing to `io`.
pub fn dispatch(cli: Cli, io: &mut Io<'_>) -> ExitCode {
    match cli.command {
        Command::Generate(cmd) => generate::run(cmd, io),
        Command::Validate(args) => validate::run(args, io),
        Command::Crds => crds::run(io),
        Command::Credentials(cmd) => credentials::run(cmd, cli.verbose),
        Command::Completion(args) => completion::run(args.shell, io),
        Command::Render(args) => render::run(args, io),
        Command::ImportImages(args) => import_images::run(args, cli.verbose, io),
        Command::Create(cmd) => cluster::create(cmd, cli.verbose, io),
        Command::Upgrade(cmd) => cluster::upgrade(cmd, cli.verbose, io),
        Command::Delete(cmd) => cluster::delete(cmd, cli.verbose, io),
        Command::Describe(cmd) => cluster::describe(cmd, io),
        Command::Controller(args) => controller::run(args, cli.verbose, io),
    }
}
