//! One module per command. Commands never import each other: what two share is resolved in
//! [`crate::settings`] or lives in a library crate.

pub mod build;
pub mod cluster;
pub mod controller;
pub mod credentials;
pub mod devices;
pub mod download;
pub mod generate;
pub mod import;
pub mod import_images;
pub mod init;
pub mod registry;
pub mod render;
pub mod store;
pub mod support_bundle;
pub mod validate;
pub mod version;

use crate::{
    args::{
        BuildCommand, Cli, Command, CreateCommand, DeleteCommand, DescribeCommand, DownloadCommand,
        GetCommand, ImportCommand, MoveCommand, RegistryCommand, RenewCommand, StoreCommand,
        UpgradeCommand, UpgradePlanCommand,
    },
    env::Environment,
    output::Io,
    settings::GlobalSettings,
};
use clap::CommandFactory;
use std::process::ExitCode;

/// Runs a parsed command line, writing to `io`.
pub fn dispatch(cli: Cli, environment: &Environment, io: &mut Io<'_>) -> ExitCode {
    let global = GlobalSettings::resolve(&cli);
    // -vv: the libraries' debug log on stderr (the controller sets up its own).
    if let (Some(filter), false) = (
        global.log_filter(false),
        matches!(cli.command, Command::Controller(_)),
    ) {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
            .with_writer(crate::logging::RedactedStderr)
            .with_ansi(false)
            .try_init();
    }
    let outcome = match cli.command {
        Command::Generate(cmd) => generate::run(cmd, io),
        Command::Validate(args) => validate::run(args, environment, io),
        Command::Crds => generate::crds(io),
        Command::Credentials(cmd) => credentials::run(cmd, global.verbose, environment, io),
        Command::Completion(args) => {
            let mut script = Vec::new();
            clap_complete::generate(args.shell, &mut Cli::command(), "snowctl", &mut script);
            io.out(&String::from_utf8_lossy(&script));
            Ok(ExitCode::SUCCESS)
        }
        Command::Render(args) => render::run(
            &args.render,
            args.existing.as_deref(),
            None,
            environment,
            io,
        ),
        Command::Store(StoreCommand::Cilium(args)) => store::cilium(args, global, environment, io),
        Command::Download(DownloadCommand::Artifacts(args)) => {
            download::artifacts(args, global, environment, io)
        }
        Command::ImportImages(args) => import_images::run(args, global, environment, io),
        // A dry run renders what create would apply.
        Command::Create(CreateCommand::Cluster(args)) if args.dry_run => {
            let components = &args.bootstrap.components;
            let fetch = (
                components.cache_dir.as_deref(),
                components.ca_certs.as_slice(),
            );
            render::run(&args.render, None, Some(fetch), environment, io)
        }
        Command::Create(CreateCommand::Cluster(args)) => {
            cluster::create(args, global, environment, io)
        }
        Command::Upgrade(UpgradeCommand::Cluster(args)) => {
            cluster::upgrade(args, global, environment, io)
        }
        Command::Upgrade(UpgradeCommand::ManagementComponents(args)) => {
            let backup = !args.no_backup;
            init::run(
                args.init,
                global,
                environment,
                io,
                init::Mode::Upgrade { backup },
            )
        }
        Command::Upgrade(UpgradeCommand::Plan(UpgradePlanCommand::Cluster(args))) => {
            cluster::upgrade_plan(args, global, environment, io)
        }
        Command::Upgrade(UpgradeCommand::Plan(UpgradePlanCommand::ManagementComponents(args))) => {
            init::plan(args, global, environment, io)
        }
        Command::Delete(DeleteCommand::Cluster(args)) => {
            cluster::delete(args, global, environment, io)
        }
        Command::Describe(DescribeCommand::Cluster(args)) => {
            cluster::describe(args, environment, io)
        }
        Command::Renew(RenewCommand::Certificates(args)) => {
            cluster::renew_certificates(args, global, environment, io)
        }
        Command::Controller(args) => controller::run(args, global, environment, io),
        Command::Devices(cmd) => devices::run(cmd, environment, io),
        Command::Init(args) => init::run(args, global, environment, io, init::Mode::Init),
        Command::Move(MoveCommand::Cluster(args)) => {
            cluster::move_cluster(args, global, environment, io)
        }
        Command::Build(BuildCommand::ControllerImage(args)) => build::controller_image(&args, io),
        Command::SupportBundle(args) => support_bundle::run(args, environment, io),
        Command::Import(ImportCommand::Cluster(args)) => import::cluster(args, environment, io),
        Command::Get(GetCommand::Clusters(args)) => import::clusters(args, environment, io),
        Command::Version(args) => version::run(&args, environment, io),
        Command::Registry(RegistryCommand::Serve(args)) => registry::serve(args, io),
    };
    outcome.unwrap_or_else(|code| code)
}
