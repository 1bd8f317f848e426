//! The command-line interface: clap definitions only. Commands live in `commands`.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Provision and manage EKS Distro clusters on AWS Snowball Edge devices.
#[derive(Debug, Parser)]
#[command(name = "snowctl", version, about, propagate_version = true)]
pub struct Cli {
    /// More detail on stderr (repeat for more).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,

    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The top-level commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Generate starting configuration.
    #[command(subcommand)]
    Generate(GenerateCommand),
    /// Check a cluster spec: statically with --offline.
    Validate(ValidateArgs),
    /// Print the CRDs of the EKS Anywhere Snow kinds (Cluster, SnowDatacenterConfig,
    /// SnowMachineConfig, SnowIPPool) as YAML.
    Crds,
    /// Check and encode the device credentials file and CA bundle.
    #[command(subcommand)]
    Credentials(CredentialsCommand),
    /// Print a shell completion script.
    Completion(CompletionArgs),
    /// Render the Cluster API and CAPAS objects of a cluster as YAML.
    Render(RenderArgs),
    /// List the images a Snow cluster needs, or copy them to a registry on the site.
    ImportImages(ImportImagesArgs),
    /// Create resources.
    #[command(subcommand)]
    Create(CreateCommand),
}

/// `snowctl render -f FILE`
#[derive(Debug, Args)]
pub struct RenderArgs {
    /// The cluster spec file, or `-` for standard input.
    #[arg(short = 'f', long = "filename", value_name = "FILE")]
    pub file: PathBuf,
    /// An EKS Anywhere Bundles manifest to take versions and images from (default: embedded).
    #[arg(long, value_name = "FILE")]
    pub bundles: Option<PathBuf>,
    /// EKS Distro Release manifests for the bundle's Kubernetes versions (repeatable).
    #[arg(long = "eksd-release", value_name = "FILE")]
    pub eksd_releases: Vec<PathBuf>,
    /// The cluster's objects now on the management cluster (multi-document YAML), to render an
    /// upgrade: changed templates get the next -N name and the plan goes to stderr.
    #[arg(long, value_name = "FILE")]
    pub existing: Option<PathBuf>,
    /// Leave out the CAPAS identity Secret.
    #[arg(long)]
    pub no_secrets: bool,
    /// The Cluster API contract (default: from the CAPAS version of the release bundle).
    #[arg(long, value_parser = ["v1beta1", "v1beta2"])]
    pub contract: Option<String>,
    /// The device credentials and CA bundle, for the identity Secret.
    #[command(flatten)]
    pub device_files: OptionalDeviceFiles,
}

/// The credentials INI and CA bundle when a command can do without them.
#[derive(Debug, Args)]
pub struct OptionalDeviceFiles {
    /// The AWS credentials INI file, one profile per device IP.
    #[arg(
        long = "credentials",
        env = "EKSA_AWS_CREDENTIALS_FILE",
        value_name = "FILE"
    )]
    pub credentials: Option<PathBuf>,
    /// The PEM bundle of the devices' certificates.
    #[arg(
        long = "ca-bundle",
        env = "EKSA_AWS_CA_BUNDLES_FILE",
        value_name = "FILE"
    )]
    pub ca_bundle: Option<PathBuf>,
}

/// `snowctl import-images --registry HOST:PORT[/NAMESPACE]` or `--list`
#[derive(Debug, Args)]
pub struct ImportImagesArgs {
    /// Print the image list instead of copying.
    #[arg(long)]
    pub list: bool,
    /// Output format of `--list` and of the summary.
    #[arg(short, long, value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
    /// An EKS Anywhere Bundles manifest (default: the embedded catalog).
    #[arg(long, value_name = "FILE")]
    pub bundles: Option<PathBuf>,
    /// EKS Distro Release manifests for the bundle's Kubernetes versions (repeatable).
    #[arg(long = "eksd-release", value_name = "FILE")]
    pub eksd_releases: Vec<PathBuf>,
    /// Kubernetes versions (1.NN, repeatable; default: every version of the bundle).
    #[arg(long = "kubernetes-version", value_name = "1.NN")]
    pub kubernetes_versions: Vec<String>,
    /// Node operating systems (repeatable; default: both).
    #[arg(long = "os", value_enum)]
    pub os: Vec<OsArg>,
    /// Copy these images instead of the bundle's (repeatable).
    #[arg(long = "image", value_name = "URI")]
    pub images: Vec<String>,
    /// Copy the images listed in FILE (one URI a line, `#` comments) instead of the bundle's.
    #[arg(long, value_name = "FILE")]
    pub images_file: Option<PathBuf>,
    /// The target registry, `HOST:PORT[/NAMESPACE]`.
    #[arg(long, value_name = "HOST:PORT[/NAMESPACE]")]
    pub registry: Option<String>,
    /// Read the images from this registry (a mirror with the same repository paths) instead of
    /// each image's own registry.
    #[arg(long, value_name = "HOST[:PORT]")]
    pub source_registry: Option<String>,
    /// Keep every platform of an image index (default: linux/amd64 only, the index rewritten).
    #[arg(long)]
    pub all_platforms: bool,
    /// Images copied at once.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub concurrency: u16,
    /// A PEM CA bundle to trust for the registries (repeatable), e.g. a self-signed registry CA.
    #[arg(long = "ca-cert", value_name = "FILE")]
    pub ca_certs: Vec<PathBuf>,
    /// Speak plain HTTP to --registry.
    #[arg(long)]
    pub insecure: bool,
    /// Speak plain HTTP to --source-registry.
    #[arg(long, requires = "source_registry")]
    pub source_insecure: bool,
    /// User for the target registry (password from standard input with --password-stdin).
    #[arg(long, requires = "password_stdin")]
    pub username: Option<String>,
    /// Read the target registry's password from standard input.
    #[arg(long, requires = "username")]
    pub password_stdin: bool,
    /// The Docker config file with registry credentials (default: $DOCKER_CONFIG/config.json or
    /// ~/.docker/config.json when present).
    #[arg(long, value_name = "FILE")]
    pub docker_config: Option<PathBuf>,
}

/// `snowctl create …`
#[derive(Debug, Subcommand)]
pub enum CreateCommand {
    /// Create a cluster on a management cluster (`--dry-run` prints what would be applied).
    Cluster(CreateClusterArgs),
}

/// `snowctl create cluster -f FILE`
#[derive(Debug, Args)]
pub struct CreateClusterArgs {
    /// Print the objects instead of applying them.
    #[arg(long)]
    pub dry_run: bool,
    /// What to render.
    #[command(flatten)]
    pub render: RenderArgs,
}

/// `snowctl generate …`
#[derive(Debug, Subcommand)]
pub enum GenerateCommand {
    /// Print a commented starting cluster spec.
    Clusterconfig(GenerateClusterconfigArgs),
}

/// The operating systems a Snow node can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OsArg {
    /// Ubuntu.
    Ubuntu,
    /// Bottlerocket.
    Bottlerocket,
}

/// The providers `generate clusterconfig` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProviderArg {
    /// AWS Snowball Edge.
    Snow,
}

/// `snowctl generate clusterconfig NAME --provider snow`
#[derive(Debug, Args)]
pub struct GenerateClusterconfigArgs {
    /// The cluster name.
    pub name: String,
    /// The infrastructure provider.
    #[arg(short, long)]
    pub provider: ProviderArg,
    /// Device IPs, comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub devices: Vec<String>,
    /// The control-plane endpoint IP (kube-vip address).
    #[arg(long)]
    pub endpoint: Option<String>,
    /// Kubernetes version, 1.NN.
    #[arg(long)]
    pub kubernetes_version: Option<String>,
    /// Node operating system.
    #[arg(long, value_enum, default_value_t = OsArg::Ubuntu)]
    pub os: OsArg,
    /// Instance type for every machine config.
    #[arg(long)]
    pub instance_type: Option<String>,
    /// Name of an SSH key pair on the devices.
    #[arg(long)]
    pub ssh_key_name: Option<String>,
}

/// Output formats for reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum OutputFormat {
    /// Human-readable text.
    #[default]
    Text,
    /// JSON for tools.
    Json,
}

/// `snowctl validate -f FILE`
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// The cluster spec file, or `-` for standard input.
    #[arg(short = 'f', long = "filename", value_name = "FILE")]
    pub file: PathBuf,
    /// Check the spec alone, without contacting devices.
    #[arg(long)]
    pub offline: bool,
    /// Output format.
    #[arg(short, long, value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
    /// The device credentials and CA bundle (for the device checks).
    #[command(flatten)]
    pub device_files: OptionalDeviceFiles,
    /// Do not probe whether the control-plane endpoint IP is already in use.
    #[arg(long)]
    pub skip_ip_check: bool,
    /// Seconds to wait for each device request (the connect timeout is at most 3 s).
    #[arg(long, value_name = "SECONDS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=600))]
    pub timeout: u64,
}

/// `snowctl credentials …`
#[derive(Debug, Subcommand)]
pub enum CredentialsCommand {
    /// Check the credentials file and CA bundle, device by device.
    Check(CredentialsCheckArgs),
    /// Print the `export AWS_B64ENCODED_*` lines for `clusterctl init --infrastructure snow`.
    Encode(CredentialsFilesArgs),
}

/// The two input files every device operation starts from.
#[derive(Debug, Args)]
pub struct CredentialsFilesArgs {
    /// The AWS credentials INI file, one profile per device IP.
    #[arg(
        long = "credentials",
        env = "EKSA_AWS_CREDENTIALS_FILE",
        value_name = "FILE"
    )]
    pub credentials: PathBuf,
    /// The PEM bundle of the devices' certificates.
    #[arg(
        long = "ca-bundle",
        env = "EKSA_AWS_CA_BUNDLES_FILE",
        value_name = "FILE"
    )]
    pub ca_bundle: PathBuf,
}

/// `snowctl credentials check`
#[derive(Debug, Args)]
pub struct CredentialsCheckArgs {
    /// The input files.
    #[command(flatten)]
    pub files: CredentialsFilesArgs,
    /// Output format.
    #[arg(short, long, value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
}

/// `snowctl completion SHELL`
#[derive(Debug, Args)]
pub struct CompletionArgs {
    /// The shell.
    pub shell: clap_complete::Shell,
}
