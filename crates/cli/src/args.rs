//! The command-line interface: clap definitions only. Commands live in `commands`.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Provision and manage EKS Distro clusters on AWS Snowball Edge devices.
#[derive(Debug, Parser)]
#[command(name = "snowctl", version, about, propagate_version = true)]
pub struct Cli {
    /// More detail on stderr: -v every step of the work, -vv also the libraries' debug log
    /// (each Kubernetes request; the controller: trace).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Only errors and warnings on stderr (no progress); the result on stdout is unchanged.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,

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
    /// Check a cluster spec against the release create would use and the devices; statically
    /// with --offline.
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
    Render(RenderCommandArgs),
    /// Download what a disconnected site needs into one archive, on a connected machine.
    #[command(subcommand)]
    Download(DownloadCommand),
    /// List the images a Snow cluster needs, or copy them to a registry on the site.
    ImportImages(ImportImagesArgs),
    /// Create resources.
    #[command(subcommand)]
    Create(CreateCommand),
    /// Upgrade resources.
    #[command(subcommand)]
    Upgrade(UpgradeCommand),
    /// Delete resources.
    #[command(subcommand)]
    Delete(DeleteCommand),
    /// Show resources and their state.
    #[command(subcommand)]
    Describe(DescribeCommand),
    /// Renew certificates by replacing the machines that hold them.
    #[command(subcommand)]
    Renew(RenewCommand),
    /// Reconcile Snow clusters declared on the management cluster (kubectl, GitOps).
    Controller(ControllerArgs),
    /// Chores on the devices: inventory, cleanup of a cluster's leftovers, usable AMIs, SSH keys.
    #[command(subcommand)]
    Devices(DevicesCommand),
    /// Install cert-manager, Cluster API, the kubeadm and etcdadm providers and CAPAS on a
    /// cluster, with clusterctl's labels and inventory (no clusterctl needed).
    Init(InitArgs),
    /// Move a cluster's Cluster API objects to another management cluster, or back up and
    /// restore them.
    #[command(subcommand)]
    Move(MoveCommand),
    /// Store rendered manifests on the management cluster for the in-cluster controller.
    #[command(subcommand)]
    Store(StoreCommand),
    /// Build artifacts from this snowctl: the controller's container image.
    #[command(subcommand)]
    Build(BuildCommand),
    /// Write a cluster's support bundle (.tar.gz): its objects on the management and workload
    /// clusters, events, recent logs, the device inventory, and a summary of what looks wrong;
    /// never a Secret's data or a credential.
    SupportBundle(SupportBundleArgs),
    /// Record an existing cluster on the management cluster, observe-only.
    #[command(subcommand)]
    Import(ImportCommand),
    /// List resources.
    #[command(subcommand)]
    Get(GetCommand),
    /// This snowctl's version, its embedded catalog, the release manifest it defaults to, and
    /// whether the programs some commands run (helm, kind, docker) are on PATH.
    Version(VersionArgs),
    /// Serve an image archive as a read-only registry: the mirror the nodes of a disconnected
    /// site pull from.
    #[command(subcommand)]
    Registry(RegistryCommand),
}

/// `snowctl registry …`
#[derive(Debug, Subcommand)]
pub enum RegistryCommand {
    /// Serve an archive of `download artifacts` (or its unpacked directory, or an OCI image
    /// layout) over HTTPS as a read-only OCI registry until SIGINT or SIGTERM: manifests and
    /// blobs by tag and digest, tag lists, Range on blobs; pushes are refused. Nodes ask through
    /// the spec's registryMirrorConfiguration (containerd's `ns`, the ociNamespaces paths).
    /// Blobs are read from the tar by offset, never unpacked. With --state-dir a CA and a
    /// certificate for the serving addresses are made there (0600, reused on restart) and the
    /// spec's registryMirrorConfiguration with that CA is printed on stdout.
    Serve(RegistryServeArgs),
}

/// `snowctl registry serve --archive FILE --listen IP:PORT (--cert FILE --key FILE | --state-dir DIR)`
#[derive(Debug, Args)]
pub struct RegistryServeArgs {
    /// The archive: a `download artifacts` tar, its unpacked directory, or an OCI image layout.
    #[arg(long, value_name = "FILE")]
    pub archive: PathBuf,
    /// The address and port to listen on (0.0.0.0 for every address, then name the ones the
    /// nodes use with --address).
    #[arg(long, value_name = "IP:PORT")]
    pub listen: String,
    /// The serving certificate (PEM, leaf first) instead of one made in --state-dir.
    #[arg(
        long,
        value_name = "FILE",
        requires = "key",
        conflicts_with = "state_dir"
    )]
    pub cert: Option<PathBuf>,
    /// The key of --cert (PEM).
    #[arg(long, value_name = "FILE", requires = "cert")]
    pub key: Option<PathBuf>,
    /// Where the CA and the serving certificate are made and kept (ca.crt, ca.key, tls.crt,
    /// tls.key, 0600); made again only when the addresses change or it nears its end, always
    /// with the same CA.
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// An IP address the nodes reach the registry at (repeatable), named in the made
    /// certificate; default: the --listen address.
    #[arg(long = "address", value_name = "IP")]
    pub addresses: Vec<String>,
    /// A registry's namespace on the mirror, as the spec's ociNamespaces (repeatable):
    /// requests under /v2/NAMESPACE/ are that registry's images.
    #[arg(long = "oci-namespace", value_name = "REGISTRY=NAMESPACE")]
    pub namespaces: Vec<String>,
}

/// `snowctl version [-o text|json|yaml]`
#[derive(Debug, Args)]
pub struct VersionArgs {
    /// Output format.
    #[arg(short, long, value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
}

/// `snowctl support-bundle CLUSTER --output-file FILE.tar.gz`
#[derive(Debug, Args)]
pub struct SupportBundleArgs {
    /// The cluster name.
    pub name: String,
    /// The file to write (a .tar.gz); refused if it exists, unless --force.
    #[arg(long, value_name = "FILE")]
    pub output_file: PathBuf,
    /// Replace an existing regular file at --output-file (a bundle of an earlier run); a link
    /// is always refused.
    #[arg(long)]
    pub force: bool,
    /// The management cluster.
    #[command(flatten)]
    pub management: ManagementArgs,
    /// The device credentials and CA bundle: with both, the cluster's devices are described
    /// (Describe calls only).
    #[command(flatten)]
    pub device_files: OptionalDeviceFiles,
    /// Each device request's time limit.
    #[arg(long, value_name = "DURATION", default_value = defaults::device_request(), value_parser = duration)]
    pub timeout: std::time::Duration,
}

/// `snowctl import …`
#[derive(Debug, Subcommand)]
pub enum ImportCommand {
    /// Read an existing cluster (its nodes; with device files, the instances behind them, by
    /// Describe calls only) and record it on the management cluster: a Cluster, an
    /// AWSSnowCluster annotated cluster.x-k8s.io/managed-by: snowctl, the <NAME>-kubeconfig
    /// Secret and the observation in ConfigMap <NAME>-observed. Nothing is written to the
    /// devices or the workload cluster; a re-run refreshes the observation.
    Cluster(ImportClusterArgs),
}

/// `snowctl import cluster NAME --kubeconfig MGMT --workload-kubeconfig FILE`
#[derive(Debug, Args)]
pub struct ImportClusterArgs {
    /// The name to record the cluster under.
    pub name: String,
    /// The management cluster.
    #[command(flatten)]
    pub management: ManagementArgs,
    /// The existing cluster's kubeconfig (inline credentials only: it is published as the
    /// <NAME>-kubeconfig Secret).
    #[arg(long, value_name = "FILE")]
    pub workload_kubeconfig: PathBuf,
    /// The devices to read, comma-separated (default: every profile of the credentials file;
    /// no device is read without a credentials file).
    #[arg(long, value_delimiter = ',', value_name = "IP,...")]
    pub devices: Vec<snow_api::DeviceIp>,
    /// The device credentials (a read-only user's suffices) and CA bundle.
    #[command(flatten)]
    pub device_files: OptionalDeviceFiles,
    /// Each device request's time limit.
    #[arg(long, value_name = "DURATION", default_value = defaults::device_request(), value_parser = duration)]
    pub timeout: std::time::Duration,
}

/// `snowctl get …`
#[derive(Debug, Subcommand)]
pub enum GetCommand {
    /// Every cluster the management cluster knows, managed and imported: kind, Kubernetes
    /// version, nodes, readiness, devices, the registry mirror its spec names and whether it
    /// answers; with device files, the instances on the devices that belong to no listed
    /// cluster.
    Clusters(GetClustersArgs),
}

/// `snowctl get clusters --kubeconfig MGMT`
#[derive(Debug, Args)]
pub struct GetClustersArgs {
    /// The management cluster.
    #[command(flatten)]
    pub management: ManagementArgs,
    /// The devices to read for unaccounted instances (default: every profile of the
    /// credentials file; none without a credentials file).
    #[arg(long, value_delimiter = ',', value_name = "IP,...")]
    pub devices: Vec<snow_api::DeviceIp>,
    /// The device credentials and CA bundle.
    #[command(flatten)]
    pub device_files: OptionalDeviceFiles,
    /// Each device request's time limit.
    #[arg(long, value_name = "DURATION", default_value = defaults::device_request(), value_parser = duration)]
    pub timeout: std::time::Duration,
    /// Output format.
    #[arg(short, long, value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
}

/// `snowctl build …`
#[derive(Debug, Subcommand)]
pub enum BuildCommand {
    /// The controller's container image, without docker: a FROM-scratch OCI image holding this
    /// snowctl executable (which must be statically linked: scripts/build-controller-image
    /// builds one and runs this), a CA certificates file and the non-root user 65532, written
    /// as an OCI image archive (a tar) named snowctl/controller:v<version>. The same executable
    /// and CA file give the same bytes and digest.
    ControllerImage(BuildControllerImageArgs),
}

/// `snowctl build controller-image --output-file FILE [--ca-certificates FILE]`
#[derive(Debug, Args)]
pub struct BuildControllerImageArgs {
    /// The image archive to write (it must not exist).
    #[arg(long, value_name = "FILE")]
    pub output_file: PathBuf,
    /// The PEM CA certificates put into the image at /etc/ssl/certs/ca-certificates.crt (e.g.
    /// a bundle with the site's own CAs added).
    #[arg(
        long,
        value_name = "FILE",
        default_value = "/etc/ssl/certs/ca-certificates.crt"
    )]
    pub ca_certificates: PathBuf,
}

/// `snowctl move …`
#[derive(Debug, Subcommand)]
pub enum MoveCommand {
    /// Move a cluster (or write it to / restore it from a directory).
    Cluster(MoveClusterArgs),
}

/// `snowctl move cluster NAME --kubeconfig FROM (--to-kubeconfig TO | --to-directory DIR)`, or
/// `snowctl move cluster --from-directory DIR --to-kubeconfig TO`
#[derive(Debug, Args)]
pub struct MoveClusterArgs {
    /// The cluster name.
    #[arg(
        required_unless_present = "from_directory",
        conflicts_with = "from_directory"
    )]
    pub name: Option<String>,
    /// The management cluster the cluster is on (--kubeconfig, --context).
    #[command(flatten)]
    pub management: ManagementArgs,
    /// The management cluster to move it to.
    #[arg(long, value_name = "FILE", required_unless_present = "to_directory")]
    pub to_kubeconfig: Option<PathBuf>,
    /// The context of --to-kubeconfig (default: its current context).
    #[arg(long, value_name = "NAME")]
    pub to_context: Option<String>,
    /// Write the cluster's objects to this directory, one YAML file per object (a backup; the
    /// source keeps them).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["to_kubeconfig", "from_directory"])]
    pub to_directory: Option<PathBuf>,
    /// Restore the objects a --to-directory backup wrote onto --to-kubeconfig.
    #[arg(long, value_name = "DIR", requires = "to_kubeconfig")]
    pub from_directory: Option<PathBuf>,
    /// The namespace of the cluster's objects.
    #[arg(short, long, value_name = "NAME", default_value = snow_api::names::SYSTEM_NAMESPACE)]
    pub namespace: String,
}

/// `snowctl init --kubeconfig FILE [--components-dir DIR | --artifacts FILE]`
#[derive(Debug, Args)]
pub struct InitArgs {
    /// The cluster to install on.
    #[command(flatten)]
    pub management: ManagementArgs,
    /// Where the components manifests come from.
    #[command(flatten)]
    pub components: ComponentArgs,
    /// The release catalog (versions and images of the components).
    #[command(flatten)]
    pub release: ReleaseArgs,
    /// Take the components from this Kubernetes version's bundle (default: the newest).
    #[arg(long, value_name = "1.NN")]
    pub kubernetes_version: Option<String>,
    /// The device credentials and CA bundle (CAPAS' AWS_B64ENCODED_* variables).
    #[command(flatten)]
    pub device_files: OptionalDeviceFiles,
    /// Print the objects instead of applying them (Secret values redacted); upgrade
    /// management-components prints the plan only.
    #[arg(long)]
    pub dry_run: bool,
    /// With --dry-run: print Secret values.
    #[arg(long, requires = "dry_run")]
    pub show_secrets: bool,
    /// Install the snowctl controller (Deployment, RBAC, webhooks in eksa-system) with this
    /// image, after the providers (no registry publishes it: without this flag it is not
    /// installed).
    #[arg(long, value_name = "REF")]
    pub controller_image: Option<String>,
    /// How long each Deployment may take to become Available.
    #[arg(long, value_name = "DURATION", default_value = defaults::init_wait(), value_parser = duration)]
    pub wait_timeout: std::time::Duration,
    /// How often to look at the objects waited for.
    #[arg(long, value_name = "DURATION", default_value = defaults::init_poll(), value_parser = duration, hide = true)]
    pub poll_interval: std::time::Duration,
}

/// Where the provider components manifests `init` installs come from.
#[derive(Debug, Args)]
pub struct ComponentArgs {
    /// The components manifests, laid out like clusterctl's local repository:
    /// DIR/<provider>/<version>/<file>, the file named as at the end of the bundle's URI (e.g.
    /// cluster-api/v1.13.5/core-components.yaml and its metadata.yaml). Default: the archive
    /// of --artifacts, else the bundle's URIs over HTTPS, cached in --cache-dir.
    #[arg(long, value_name = "DIR", conflicts_with = "artifacts")]
    pub components_dir: Option<PathBuf>,
    /// The cache of fetched components (default: $XDG_CACHE_HOME/snowctl or ~/.cache/snowctl).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// A PEM CA bundle to trust, besides the system's, when fetching components (repeatable).
    #[arg(long = "ca-cert", value_name = "FILE")]
    pub ca_certs: Vec<PathBuf>,
}

/// The bootstrap cluster a self-managed cluster is created from or deleted through.
#[derive(Debug, Args)]
pub struct BootstrapArgs {
    /// For a self-managed cluster (created without a management cluster, or deleted): use this
    /// existing cluster (k3s, kind, any Kubernetes) as the bootstrap cluster instead of making
    /// one with kind; snowctl installs the providers there and leaves them.
    #[arg(long, value_name = "FILE")]
    pub bootstrap_kubeconfig: Option<PathBuf>,
    /// Keep the kind bootstrap cluster at the end.
    #[arg(long)]
    pub keep_bootstrap: bool,
    /// Where the providers installed on the bootstrap cluster (and on the new cluster) come
    /// from.
    #[command(flatten)]
    pub components: ComponentArgs,
}

/// Log line formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum LogFormat {
    /// One readable line per event.
    #[default]
    Text,
    /// One JSON object per event.
    Json,
}

/// `snowctl controller --kubeconfig MGMT`
#[derive(Debug, Args)]
pub struct ControllerArgs {
    /// The management cluster (default: KUBECONFIG's files, else ~/.kube/config when it exists,
    /// else the in-cluster service account).
    #[command(flatten)]
    pub management: ManagementArgs,
    /// Only this namespace's Clusters and SnowMachineConfigs (default: every namespace).
    #[arg(long, value_name = "NAME")]
    pub namespace: Option<String>,
    /// Objects reconciled at once, per kind.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub concurrency: u16,
    /// Log format (to stderr; RUST_LOG filters, -v means debug).
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
    /// Where /healthz and /readyz are served (every address by default: in a Deployment the
    /// kubelet probes the pod IP).
    #[arg(long, value_name = "ADDR", default_value = "0.0.0.0:8081")]
    pub health_addr: std::net::SocketAddr,
    /// The namespace of the leader-election Lease `snowctl-controller`.
    #[arg(long, value_name = "NS", default_value = snow_api::names::SYSTEM_NAMESPACE)]
    pub leader_election_namespace: String,
    /// Run without leader election (only when a single replica runs).
    #[arg(long)]
    pub no_leader_election: bool,
    /// The rendered Cilium manifest installed on every cluster (default: `helm template` per
    /// cluster, helm on PATH).
    #[arg(long, value_name = "FILE")]
    pub cni_manifest: Option<PathBuf>,
    /// Install the Cilium manifest stored on the management cluster for each cluster's chart,
    /// Kubernetes version and Cilium settings (by `snowctl store cilium`, `create cluster`,
    /// `upgrade cluster`): no helm and no network needed. A cluster with none stored gets the
    /// status CiliumManifestNotStored naming the command to run.
    #[arg(long, conflicts_with = "cni_manifest")]
    pub cni_stored: bool,
    /// Serve the admission webhooks over HTTPS with this directory's `tls.crt` and `tls.key`
    /// (read again when they change); without it no webhook is served.
    #[arg(long, value_name = "DIR")]
    pub webhook_cert_dir: Option<PathBuf>,
    /// Where the admission webhooks listen (with --webhook-cert-dir).
    #[arg(long, value_name = "ADDR", default_value = "0.0.0.0:9443")]
    pub webhook_addr: std::net::SocketAddr,
    /// The release catalog.
    #[command(flatten)]
    pub release: ReleaseArgs,
}

/// Where versions and images come from.
#[derive(Debug, Args)]
pub struct ReleaseArgs {
    /// An EKS Anywhere Bundles manifest to take versions and images from (default: the newest
    /// EKS Anywhere release with a Snow section, from --release-manifest; `render` and
    /// `validate --offline` alone use the embedded sample, whose images are not published).
    #[arg(long, value_name = "FILE")]
    pub bundles: Option<PathBuf>,
    /// The EKS Anywhere Release manifest the default Bundles come from, fetched over HTTPS and
    /// cached (default: https://anywhere-assets.eks.amazonaws.com/releases/eks-a/manifest.yaml).
    #[arg(long, value_name = "URL", conflicts_with_all = ["bundles", "artifacts"])]
    pub release_manifest: Option<String>,
    /// EKS Distro Release manifests for the bundle's Kubernetes versions (repeatable).
    #[arg(long = "eksd-release", value_name = "FILE")]
    pub eksd_releases: Vec<PathBuf>,
    /// An archive of `snowctl download artifacts` (or the directory it was unpacked to): its
    /// Bundles and EKS-D Release manifests instead of the published release (nothing is read from
    /// the network).
    #[arg(long, value_name = "FILE|DIR", conflicts_with_all = ["bundles", "eksd_releases"])]
    pub artifacts: Option<PathBuf>,
}

/// The management cluster to work on, found as kubectl finds it (`settings::find_kubeconfig`).
#[derive(Debug, Args)]
pub struct ManagementArgs {
    /// The management cluster's kubeconfig (it runs Cluster API and CAPAS) [default: the files
    /// of KUBECONFIG (a list separated by ':', merged as kubectl merges them: the first file to
    /// define a name wins), else ~/.kube/config when it exists]
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context (default: its current context).
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
}

/// How long to wait for each stage.
#[derive(Debug, Args)]
pub struct WaitArgs {
    /// How long to wait for the control plane to be ready.
    #[arg(long, value_name = "DURATION", default_value = defaults::control_plane(), value_parser = duration)]
    pub control_plane_wait_timeout: std::time::Duration,
    /// How long to wait for external etcd to be ready.
    #[arg(long, value_name = "DURATION", default_value = defaults::external_etcd(), value_parser = duration)]
    pub external_etcd_wait_timeout: std::time::Duration,
    /// How long to wait per worker machine (a group waits this times its machine count).
    #[arg(long, value_name = "DURATION", default_value = defaults::per_machine(), value_parser = duration)]
    pub per_machine_wait_timeout: std::time::Duration,
    /// Wait without time limits.
    #[arg(long)]
    pub no_timeouts: bool,
    /// How often to look at the objects waited for.
    #[arg(long, value_name = "DURATION", default_value = defaults::lifecycle_poll(), value_parser = duration, hide = true)]
    pub poll_interval: std::time::Duration,
}

/// `snowctl upgrade …`
#[derive(Debug, Subcommand)]
pub enum UpgradeCommand {
    /// Upgrade a cluster on a management cluster to a changed spec.
    Cluster(UpgradeClusterArgs),
    /// Upgrade the stack `init` installs to the bundle's versions (plan, apply, prune, wait).
    /// Every cluster snowctl manages there is backed up first (see --no-backup).
    ManagementComponents(UpgradeManagementArgs),
    /// Show what an upgrade would change, and apply nothing.
    #[command(subcommand)]
    Plan(UpgradePlanCommand),
}

/// `snowctl upgrade plan …`
#[derive(Debug, Subcommand)]
pub enum UpgradePlanCommand {
    /// Each component's current and new version, and which machines roll with the fields that
    /// changed (reads the management and workload clusters, writes nothing).
    Cluster(UpgradePlanClusterArgs),
    /// The management components' installed and new versions (as `upgrade
    /// management-components --dry-run`).
    ManagementComponents(UpgradePlanManagementArgs),
}

/// `snowctl upgrade plan cluster -f FILE --kubeconfig MGMT [-o json]`
#[derive(Debug, Args)]
pub struct UpgradePlanClusterArgs {
    /// What to render.
    #[command(flatten)]
    pub render: RenderArgs,
    /// The management cluster.
    #[command(flatten)]
    pub management: ManagementArgs,
    /// Output format.
    #[arg(short, long, value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
}

/// `snowctl upgrade plan management-components --kubeconfig MGMT [-o json]`
#[derive(Debug, Args)]
pub struct UpgradePlanManagementArgs {
    /// What would be installed, as for `init`.
    #[command(flatten)]
    pub init: InitArgs,
    /// Output format.
    #[arg(short, long, value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
}

/// `snowctl upgrade management-components --kubeconfig MGMT`
#[derive(Debug, Args)]
pub struct UpgradeManagementArgs {
    /// What to install, as for `init`.
    #[command(flatten)]
    pub init: InitArgs,
    /// Do not back up the clusters first (by default each cluster with a snowctl inventory on
    /// the management cluster is written to ./<cluster>/<cluster>-backup-<UTC time>/ as
    /// `move cluster --to-directory` writes it).
    #[arg(long)]
    pub no_backup: bool,
}

/// `snowctl upgrade cluster -f FILE --kubeconfig MGMT`
#[derive(Debug, Args)]
pub struct UpgradeClusterArgs {
    /// Print the plan and the objects instead of applying them.
    #[arg(long)]
    pub dry_run: bool,
    /// Do not back up the cluster first (by default its Cluster API objects are written to
    /// ./<cluster>/<cluster>-backup-<UTC time>/ as `move cluster --to-directory` writes them,
    /// before anything is applied).
    #[arg(long)]
    pub no_backup: bool,
    /// Skip the device preflight (not recommended).
    #[arg(long)]
    pub skip_validations: bool,
    /// The rendered Cilium manifest, applied again when the workload cluster runs other images
    /// (default: rendered with `helm template`, helm on PATH; not read with --dry-run).
    #[arg(long, value_name = "FILE")]
    pub cni_manifest: Option<PathBuf>,
    /// What to render.
    #[command(flatten)]
    pub render: RenderArgs,
    /// The management cluster.
    #[command(flatten)]
    pub management: ManagementArgs,
    /// Timeouts.
    #[command(flatten)]
    pub waits: WaitArgs,
    /// Do not write a support bundle (./CLUSTER/support-bundle-TIME.tar.gz) when this fails.
    #[arg(long)]
    pub no_support_bundle: bool,
}

/// `snowctl delete …`
#[derive(Debug, Subcommand)]
pub enum DeleteCommand {
    /// Delete a cluster and everything snowctl applied for it (a self-managed cluster through a
    /// bootstrap cluster).
    Cluster(DeleteClusterArgs),
}

/// `snowctl delete cluster NAME --kubeconfig MGMT`
#[derive(Debug, Args)]
pub struct DeleteClusterArgs {
    /// The cluster name (or take it from -f).
    #[arg(required_unless_present = "file", conflicts_with = "file")]
    pub name: Option<String>,
    /// The cluster spec file to take the name from (and, for a self-managed cluster, the
    /// Kubernetes version of the providers and the kind bootstrap cluster).
    #[arg(short = 'f', long = "filename", value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// The management cluster; when it is the cluster itself (self-managed), the cluster's
    /// objects are moved to a bootstrap cluster and it is deleted from there.
    #[command(flatten)]
    pub management: ManagementArgs,
    /// The bootstrap cluster, for a self-managed cluster.
    #[command(flatten)]
    pub bootstrap: BootstrapArgs,
    /// The release catalog, for the providers on the bootstrap cluster.
    #[command(flatten)]
    pub release: ReleaseArgs,
    /// The device credentials and CA bundle (CAPAS' AWS_B64ENCODED_* variables on the
    /// bootstrap cluster).
    #[command(flatten)]
    pub device_files: OptionalDeviceFiles,
    /// How long to wait for the cluster and its machines to be deleted.
    #[arg(long, value_name = "DURATION", default_value = defaults::deletion(), value_parser = duration)]
    pub delete_timeout: std::time::Duration,
    /// Wait without a time limit.
    #[arg(long)]
    pub no_timeouts: bool,
    /// How often to look.
    #[arg(long, value_name = "DURATION", default_value = defaults::lifecycle_poll(), value_parser = duration, hide = true)]
    pub poll_interval: std::time::Duration,
    /// Do not write a support bundle (./CLUSTER/support-bundle-TIME.tar.gz) when this fails.
    #[arg(long)]
    pub no_support_bundle: bool,
    /// For an imported cluster: remove only its records on the management cluster (Cluster,
    /// AWSSnowCluster, kubeconfig Secret, observation); nothing on the devices or the cluster.
    #[arg(long)]
    pub records_only: bool,
}

/// `snowctl describe …`
#[derive(Debug, Subcommand)]
pub enum DescribeCommand {
    /// Show a cluster's objects and their conditions as a tree, and the registry mirror its
    /// spec names with whether it answers (GET /v2/ over HTTPS, checked against the spec's
    /// caCertContent, within 5s).
    Cluster(DescribeClusterArgs),
}

/// `snowctl describe cluster NAME --kubeconfig MGMT`
#[derive(Debug, Args)]
pub struct DescribeClusterArgs {
    /// The cluster name.
    pub name: String,
    /// The management cluster.
    #[command(flatten)]
    pub management: ManagementArgs,
    /// Output format.
    #[arg(short, long, value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
}

/// `snowctl renew …`
#[derive(Debug, Subcommand)]
pub enum RenewCommand {
    /// Roll a cluster's control plane (every machine replaced, one at a time) so kubeadm issues
    /// new certificates, and wait as an upgrade does. External etcd machines are not rolled.
    Certificates(RenewCertificatesArgs),
}

/// `snowctl renew certificates NAME --kubeconfig MGMT`
#[derive(Debug, Args)]
pub struct RenewCertificatesArgs {
    /// The cluster name.
    pub name: String,
    /// The management cluster.
    #[command(flatten)]
    pub management: ManagementArgs,
    /// Timeouts (the control-plane one bounds the roll).
    #[command(flatten)]
    pub waits: WaitArgs,
}

/// `snowctl render -f FILE [--existing FILE]`
#[derive(Debug, Args)]
pub struct RenderCommandArgs {
    /// What to render.
    #[command(flatten)]
    pub render: RenderArgs,
    /// The cluster's objects now on the management cluster (multi-document YAML), to render an
    /// upgrade: changed templates get the next -N name and the plan goes to stderr.
    #[arg(long, value_name = "FILE")]
    pub existing: Option<PathBuf>,
}

/// What render, create and upgrade render from: the spec, the catalog and the secrets.
#[derive(Debug, Args)]
pub struct RenderArgs {
    /// The cluster spec file, or `-` for standard input.
    #[arg(short = 'f', long = "filename", value_name = "FILE")]
    pub file: PathBuf,
    /// The release catalog.
    #[command(flatten)]
    pub release: ReleaseArgs,
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
    /// The AWS credentials INI file, one profile per device IP (default: the file
    /// EKSA_AWS_CREDENTIALS_FILE names).
    #[arg(long = "credentials", value_name = "FILE")]
    pub credentials: Option<PathBuf>,
    /// The PEM bundle of the devices' certificates (default: the file EKSA_AWS_CA_BUNDLES_FILE
    /// names).
    #[arg(long = "ca-bundle", value_name = "FILE")]
    pub ca_bundle: Option<PathBuf>,
}

/// `snowctl download …`
#[derive(Debug, Subcommand)]
pub enum DownloadCommand {
    /// Every image a Snow cluster needs, and the manifests the offline commands read, into one
    /// archive (an OCI image layout in a tar) for `snowctl import-images --from FILE`.
    Artifacts(DownloadArtifactsArgs),
}

/// `snowctl download artifacts --output-file FILE`
#[derive(Debug, Args)]
pub struct DownloadArtifactsArgs {
    /// The archive to write. It is FILE.partial until every image is in; a re-run resumes it
    /// (and a re-run on a finished FILE fetches only what it lacks).
    #[arg(long, value_name = "FILE")]
    pub output_file: PathBuf,
    /// The images.
    #[command(flatten)]
    pub selection: ImageSelectionArgs,
    /// Platforms kept of multi-platform images, OS/ARCH[/VARIANT] (repeatable or
    /// comma-separated), or `all` for every platform with the index byte for byte
    /// (default: linux/amd64).
    #[arg(long = "platform", value_name = "OS/ARCH")]
    pub platforms: Vec<String>,
    /// Where the images are read from.
    #[command(flatten)]
    pub source: SourceArgs,
    /// Format of the summary on stdout.
    #[arg(short, long, value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
    /// The cache of fetched components (default: $XDG_CACHE_HOME/snowctl or ~/.cache/snowctl).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Leave out the management components and Flux's install manifest (then `init
    /// --artifacts` cannot use the archive).
    #[arg(long)]
    pub no_components: bool,
    /// Put the controller image of this archive into the download (what `snowctl build
    /// controller-image` writes: it must hold this snowctl's snowctl/controller:v<version>), so
    /// that `import-images --from` pushes it to the site registry.
    #[arg(long, value_name = "FILE")]
    pub controller_image_archive: Option<PathBuf>,
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
    /// The images.
    #[command(flatten)]
    pub selection: ImageSelectionArgs,
    /// Import the images of this archive (what `snowctl download artifacts` writes, an OCI
    /// layout in a tar such as `skopeo copy … oci-archive:` writes, or a `docker save` archive
    /// such as EKS Anywhere's images.tar), or of a directory holding one unpacked (or skopeo's
    /// `oci:DIR`), instead of reading registries; with --list, list them. `--image` picks some.
    #[arg(long, value_name = "FILE|DIR", conflicts_with_all = ["images_file", "source_registry"])]
    pub from: Option<PathBuf>,
    /// The target registry, `HOST:PORT[/NAMESPACE]`.
    #[arg(short = 'r', long, value_name = "HOST:PORT[/NAMESPACE]")]
    pub registry: Option<String>,
    /// Keep every platform of an image index (default: linux/amd64 only, the index rewritten).
    #[arg(long)]
    pub all_platforms: bool,
    /// Speak plain HTTP to --registry.
    #[arg(long)]
    pub insecure: bool,
    /// User for the target registry (password from standard input with --password-stdin).
    #[arg(long, requires = "password_stdin")]
    pub username: Option<String>,
    /// Read the target registry's password from standard input.
    #[arg(long, requires = "username")]
    pub password_stdin: bool,
    /// Where the images are read from, and registry trust.
    #[command(flatten)]
    pub source: SourceArgs,
}

/// Which images: the bundle's for some Kubernetes versions and node OSes, or a list.
#[derive(Debug, Args)]
pub struct ImageSelectionArgs {
    /// The release catalog.
    #[command(flatten)]
    pub release: ReleaseArgs,
    /// Kubernetes versions (1.NN, repeatable; default: every version of the bundle).
    #[arg(long = "kubernetes-version", value_name = "1.NN")]
    pub kubernetes_versions: Vec<String>,
    /// Node operating systems (repeatable; default: both).
    #[arg(long = "os", value_enum)]
    pub os: Vec<OsArg>,
    /// These images instead of the bundle's (repeatable).
    #[arg(long = "image", value_name = "URI")]
    pub images: Vec<String>,
    /// The images listed in FILE (one URI a line, `#` comments) instead of the bundle's.
    #[arg(long, value_name = "FILE")]
    pub images_file: Option<PathBuf>,
}

/// The registry images are read from, and how to reach registries.
#[derive(Debug, Args)]
pub struct SourceArgs {
    /// Read the images from this registry (a mirror with the same repository paths) instead of
    /// each image's own registry.
    #[arg(long, value_name = "HOST[:PORT]")]
    pub source_registry: Option<String>,
    /// Speak plain HTTP to --source-registry.
    #[arg(long, requires = "source_registry")]
    pub source_insecure: bool,
    /// A PEM CA bundle to trust for the registries and, in download artifacts, the components'
    /// HTTPS server (repeatable), e.g. a self-signed registry CA.
    #[arg(long = "ca-cert", value_name = "FILE")]
    pub ca_certs: Vec<PathBuf>,
    /// Images transferred at once.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub concurrency: u16,
    /// The Docker config file with registry credentials (default: $DOCKER_CONFIG/config.json or
    /// ~/.docker/config.json when present).
    #[arg(long, value_name = "FILE")]
    pub docker_config: Option<PathBuf>,
}

/// `snowctl create …`
#[derive(Debug, Subcommand)]
pub enum CreateCommand {
    /// Create a cluster on a management cluster (--kubeconfig, else KUBECONFIG, else
    /// ~/.kube/config), or, with --self-managed or when there is none, from nothing through a
    /// bootstrap cluster, so that it manages itself (`--dry-run` prints what would be applied).
    Cluster(CreateClusterArgs),
}

/// `snowctl create cluster -f FILE --kubeconfig MGMT`
#[derive(Debug, Args)]
pub struct CreateClusterArgs {
    /// Print the objects instead of applying them.
    #[arg(long)]
    pub dry_run: bool,
    /// Skip the device preflight (not recommended).
    #[arg(long)]
    pub skip_validations: bool,
    /// Do not probe whether the control-plane endpoint IP is already in use.
    #[arg(long)]
    pub skip_ip_check: bool,
    /// Overwrite a different kubeconfig file at ./CLUSTER/CLUSTER-eks-a-cluster.kubeconfig.
    #[arg(long)]
    pub force: bool,
    /// The rendered Cilium manifest to install on the workload cluster (default: rendered with
    /// `helm template` from the bundle's chart, helm on PATH).
    #[arg(long, value_name = "FILE")]
    pub cni_manifest: Option<PathBuf>,
    /// Flux's install manifest for a spec with GitOps: the install.yaml of the Flux release
    /// the bundle names.
    #[arg(long, value_name = "FILE")]
    pub flux_manifest: Option<PathBuf>,
    /// What to render.
    #[command(flatten)]
    pub render: RenderArgs,
    /// The management cluster. Without one (no --kubeconfig, no KUBECONFIG, no
    /// ~/.kube/config), or with --self-managed, the cluster is created from nothing and manages
    /// itself: a bootstrap cluster, the providers there, the cluster, the providers on it,
    /// Cluster API's objects moved into it.
    #[command(flatten)]
    pub management: ManagementArgs,
    /// Create the cluster from nothing (it manages itself), whatever KUBECONFIG and
    /// ~/.kube/config hold; without it, a kubeconfig found there is the management cluster.
    #[arg(long, conflicts_with_all = ["kubeconfig", "context"])]
    pub self_managed: bool,
    /// The bootstrap cluster, when creating from nothing.
    #[command(flatten)]
    pub bootstrap: BootstrapArgs,
    /// Without a management cluster: end by installing the snowctl controller on the new
    /// cluster with this image (default: <mirror>/snowctl/controller:v<version> when the spec
    /// has a registry mirror; otherwise it is not installed).
    #[arg(long, value_name = "REF")]
    pub controller_image: Option<String>,
    /// Timeouts.
    #[command(flatten)]
    pub waits: WaitArgs,
    /// Do not write a support bundle when this fails (on a management cluster).
    #[arg(long)]
    pub no_support_bundle: bool,
}

/// `snowctl generate …`
#[derive(Debug, Subcommand)]
pub enum GenerateCommand {
    /// Print a commented starting cluster spec.
    Clusterconfig(GenerateClusterconfigArgs),
}

/// The operating systems a Snow node can run: `snow_api::OsFamily` as a flag's value (the
/// library has no clap), mapped here only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OsArg {
    /// Ubuntu.
    Ubuntu,
    /// Bottlerocket.
    Bottlerocket,
}

impl From<OsArg> for snow_api::OsFamily {
    fn from(os: OsArg) -> Self {
        match os {
            OsArg::Ubuntu => snow_api::OsFamily::Ubuntu,
            OsArg::Bottlerocket => snow_api::OsFamily::Bottlerocket,
        }
    }
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
    #[arg(long, value_delimiter = ',', value_name = "IP,...")]
    pub devices: Vec<String>,
    /// The control-plane endpoint IP (kube-vip address).
    #[arg(long)]
    pub endpoint: Option<String>,
    /// Kubernetes version, 1.NN; refused unless the catalog has it (render and create would
    /// refuse the spec).
    #[arg(long, value_name = "1.NN")]
    pub kubernetes_version: Option<String>,
    /// The EKS Anywhere Bundles manifest --kubernetes-version is checked against (default:
    /// snowctl's embedded catalog, the one `validate --offline` and `render` use).
    #[arg(long, value_name = "FILE")]
    pub bundles: Option<PathBuf>,
    /// Node operating system.
    #[arg(long, value_enum, default_value_t = OsArg::Ubuntu)]
    pub os: OsArg,
    /// Instance type for every machine config.
    #[arg(long)]
    pub instance_type: Option<String>,
    /// Name of an SSH key pair on the devices.
    #[arg(long)]
    pub ssh_key_name: Option<String>,
    /// Adds GitOps: a FluxConfig of this git repository (ssh://[user@]host[:port]/path, or
    /// https://host[:port]/path, which EKS Anywhere does not accept), named after the cluster,
    /// and the Cluster's gitOpsRef to it.
    #[arg(long, value_name = "URL")]
    pub gitops_url: Option<String>,
    /// Adds the Cluster's registryMirrorConfiguration: the registry the nodes pull every image
    /// from, HOST:PORT (e.g. the --listen address of `snowctl registry serve`).
    #[arg(long, value_name = "HOST:PORT")]
    pub registry_mirror: Option<String>,
    /// The CA certificate (PEM) that signed the mirror's certificate, written as its
    /// caCertContent so the nodes trust the mirror (`registry serve --state-dir DIR` writes
    /// DIR/ca.crt).
    #[arg(long, value_name = "FILE", requires = "registry_mirror")]
    pub registry_mirror_ca: Option<PathBuf>,
    /// A registry's namespace on the mirror, as the spec's ociNamespaces (repeatable): the
    /// nodes ask for that registry's images under /v2/NAMESPACE/.
    #[arg(
        long = "oci-namespace",
        value_name = "REGISTRY=NAMESPACE",
        requires = "registry_mirror"
    )]
    pub oci_namespaces: Vec<String>,
}

/// Output formats for reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum OutputFormat {
    /// Human-readable text.
    #[default]
    Text,
    /// JSON for tools.
    Json,
    /// YAML for tools.
    Yaml,
}

/// `snowctl validate -f FILE`
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// The cluster spec file, or `-` for standard input.
    #[arg(short = 'f', long = "filename", value_name = "FILE")]
    pub file: PathBuf,
    /// Check the spec alone, without contacting devices or the network: its Kubernetes version
    /// against snowctl's embedded sample catalog (a warning when it lacks it), or against
    /// --bundles or --artifacts when given.
    #[arg(long, conflicts_with_all = ["release_manifest", "cache_dir", "ca_certs"])]
    pub offline: bool,
    /// The release the spec's Kubernetes version must be in, as create takes it (without
    /// --offline: the published release unless --bundles or --artifacts).
    #[command(flatten)]
    pub release: ReleaseArgs,
    /// The cache of fetched release manifests (default: $XDG_CACHE_HOME/snowctl or
    /// ~/.cache/snowctl).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// A PEM CA bundle to trust, besides the system's, when fetching the release manifests
    /// (repeatable).
    #[arg(long = "ca-cert", value_name = "FILE")]
    pub ca_certs: Vec<PathBuf>,
    /// Output format.
    #[arg(short, long, value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
    /// The device credentials and CA bundle (for the device checks).
    #[command(flatten)]
    pub device_files: OptionalDeviceFiles,
    /// Do not probe whether the control-plane endpoint IP is already in use.
    #[arg(long)]
    pub skip_ip_check: bool,
    /// How long to wait for each device request, from 1s to 10m (the connect timeout is at
    /// most 3 s).
    #[arg(long, value_name = "DURATION", default_value = defaults::device_request(), value_parser = device_timeout)]
    pub timeout: std::time::Duration,
}

/// `snowctl credentials …`
#[derive(Debug, Subcommand)]
pub enum CredentialsCommand {
    /// Check the credentials file and CA bundle, device by device.
    Check(CredentialsCheckArgs),
    /// Print the `export AWS_B64ENCODED_*` lines for `clusterctl init --infrastructure snow`.
    Encode(CredentialsFilesArgs),
    /// On each device, an IAM user with exactly EKS Anywhere's Snow policy and an access key,
    /// written to a new credentials file (mode 0600) for EKSA_AWS_CREDENTIALS_FILE. Signs with
    /// the root credentials file; idempotent.
    CreateScopedUser(CreateScopedUserArgs),
}

/// `snowctl credentials create-scoped-user`
#[derive(Debug, Args)]
pub struct CreateScopedUserArgs {
    /// The IAM user to create (or check) on every device.
    #[arg(long, value_name = "NAME")]
    pub user: String,
    /// The credentials file to write: one profile per device with the user's key. Never printed.
    #[arg(long, value_name = "FILE")]
    pub output_file: PathBuf,
    /// The devices, and the root credentials file and CA bundle.
    #[command(flatten)]
    pub targets: DeviceTargets,
    /// Make a new key even where FILE has a working one; the old key is deleted once FILE holds
    /// the new one.
    #[arg(long)]
    pub rotate: bool,
    /// Replace FILE even when snowctl did not write it (what is in it is lost).
    #[arg(long)]
    pub force: bool,
    /// Give the user only the Describe calls `devices describe` and `import cluster` make
    /// (policy snowctl-read-only) instead of EKS Anywhere's Snow policy.
    #[arg(long)]
    pub read_only: bool,
    /// The devices' IAM port.
    #[arg(long, value_name = "PORT", default_value_t = 6078)]
    pub iam_port: u16,
}

/// The two input files every device operation starts from.
#[derive(Debug, Args)]
pub struct CredentialsFilesArgs {
    /// The AWS credentials INI file, one profile per device IP (required; default: the file
    /// EKSA_AWS_CREDENTIALS_FILE names).
    #[arg(long = "credentials", value_name = "FILE")]
    pub credentials: Option<PathBuf>,
    /// The PEM bundle of the devices' certificates (required; default: the file
    /// EKSA_AWS_CA_BUNDLES_FILE names).
    #[arg(long = "ca-bundle", value_name = "FILE")]
    pub ca_bundle: Option<PathBuf>,
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

/// `snowctl devices …`
#[derive(Debug, Subcommand)]
pub enum DevicesCommand {
    /// Per device: state, software, capacity, instances by cluster, DNIs, AMIs, key pairs.
    Describe(DevicesDescribeArgs),
    /// Remove what a cluster left on the devices: its DNIs, then its tags, then its instances.
    Cleanup(DevicesCleanupArgs),
    /// The AMIs tagged for a Kubernetes version and OS family, per device, as preflight picks.
    Images(DevicesImagesArgs),
    /// Import an SSH public key as key pair NAME on every device that lacks it.
    ImportKey(DevicesImportKeyArgs),
}

/// The devices a `devices` command works on.
#[derive(Debug, Args)]
pub struct DeviceTargets {
    /// The devices of this cluster spec's machine configs.
    #[arg(
        short = 'f',
        long = "filename",
        value_name = "FILE",
        conflicts_with = "devices"
    )]
    pub spec: Option<PathBuf>,
    /// The device IPs, comma-separated (default: every profile of the credentials file).
    #[arg(long, value_delimiter = ',', value_name = "IP,...")]
    pub devices: Vec<snow_api::DeviceIp>,
    /// The device credentials and CA bundle.
    #[command(flatten)]
    pub device_files: OptionalDeviceFiles,
    /// Each device request's time limit.
    #[arg(long, value_name = "DURATION", default_value = defaults::device_request(), value_parser = duration)]
    pub timeout: std::time::Duration,
}

/// `snowctl devices describe`
#[derive(Debug, Args)]
pub struct DevicesDescribeArgs {
    /// The devices.
    #[command(flatten)]
    pub targets: DeviceTargets,
    /// Output format.
    #[arg(short, long, value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
}

/// `snowctl devices cleanup CLUSTER`
#[derive(Debug, Args)]
pub struct DevicesCleanupArgs {
    /// The cluster whose instances (tag `sigs.k8s.io/cluster-api-provider-aws-snow/cluster/NAME`)
    /// and their DNIs go.
    pub cluster: String,
    /// The devices.
    #[command(flatten)]
    pub targets: DeviceTargets,
    /// A management cluster to ask first: refuse while it still has the cluster (it would
    /// recreate the instances) [default: KUBECONFIG's files, else ~/.kube/config when it
    /// exists; with none, no management cluster is asked]
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context (default: its current context).
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
    /// Delete without asking (without it, only the plan is printed unless a terminal confirms).
    #[arg(long)]
    pub yes: bool,
    /// How long to wait for the instances to be terminated.
    #[arg(long, value_name = "DURATION", default_value = defaults::cleanup_wait(), value_parser = duration)]
    pub wait_timeout: std::time::Duration,
    /// Time between checks while waiting.
    #[arg(long, value_name = "DURATION", default_value = defaults::cleanup_poll(), value_parser = duration, hide = true)]
    pub poll_interval: std::time::Duration,
}

/// `snowctl devices images --kubernetes-version V`
#[derive(Debug, Args)]
pub struct DevicesImagesArgs {
    /// The devices.
    #[command(flatten)]
    pub targets: DeviceTargets,
    /// The `eksa.aws.com/k8s-version` tag value, e.g. 1.33.
    #[arg(long, value_name = "1.NN")]
    pub kubernetes_version: String,
    /// The `eksa.aws.com/os-family` tag value (default: any).
    #[arg(long, value_enum)]
    pub os: Option<OsArg>,
}

/// `snowctl devices import-key NAME --public-key FILE`
#[derive(Debug, Args)]
pub struct DevicesImportKeyArgs {
    /// The key pair name.
    pub name: String,
    /// The OpenSSH public key file.
    #[arg(long, value_name = "FILE")]
    pub public_key: PathBuf,
    /// The devices.
    #[command(flatten)]
    pub targets: DeviceTargets,
}

/// The duration flags' defaults, taken from the libraries that use the values (so --help and
/// the library say one thing), in the flags' syntax.
mod defaults {
    use snow_api::short_duration as go;
    use snow_provision::{InitOptions, Timeouts, WaitOptions};

    /// Each device request (`snow_validate::limits::REQUEST_TIMEOUT`).
    pub(super) fn device_request() -> String {
        go(snow_validate::limits::REQUEST_TIMEOUT)
    }
    /// Each Deployment `init` waits for.
    pub(super) fn init_wait() -> String {
        go(InitOptions::default()
            .deployment_timeout
            .unwrap_or_default())
    }
    /// How often `init` looks.
    pub(super) fn init_poll() -> String {
        go(InitOptions::default().poll)
    }
    /// The control plane's wait (EKS Anywhere's).
    pub(super) fn control_plane() -> String {
        go(Timeouts::default().control_plane.unwrap_or_default())
    }
    /// External etcd's wait.
    pub(super) fn external_etcd() -> String {
        go(Timeouts::default().external_etcd.unwrap_or_default())
    }
    /// Each machine's wait.
    pub(super) fn per_machine() -> String {
        go(Timeouts::default().per_machine.unwrap_or_default())
    }
    /// A delete's wait.
    pub(super) fn deletion() -> String {
        go(Timeouts::default().deletion.unwrap_or_default())
    }
    /// How often create, upgrade and delete look.
    pub(super) fn lifecycle_poll() -> String {
        go(WaitOptions::default().poll)
    }
    /// `devices cleanup`'s wait for terminated instances.
    pub(super) fn cleanup_wait() -> String {
        go(snow_validate::cleanup::WaitOptions::default().timeout)
    }
    /// How often `devices cleanup` looks.
    pub(super) fn cleanup_poll() -> String {
        go(snow_validate::cleanup::WaitOptions::default().poll)
    }
}

/// Every duration flag: Go's syntax (`90s`, `10m`, `1h30m`), read by the parser the spec's
/// durations go through (`snow_api::GoDuration`), so a value means one thing everywhere.
fn duration(text: &str) -> Result<std::time::Duration, String> {
    text.parse::<snow_api::GoDuration>()
        .map(Into::into)
        .map_err(|e| format!("{e}: write a duration such as 90s, 10m or 1h30m"))
}

/// `validate --timeout`: a duration from 1 s to 10 min.
fn device_timeout(text: &str) -> Result<std::time::Duration, String> {
    let d = duration(text)?;
    if d < std::time::Duration::from_secs(1) || d > std::time::Duration::from_secs(600) {
        return Err(format!("`{text}` is not from 1s to 10m"));
    }
    Ok(d)
}

/// `snowctl store …`
#[derive(Debug, Subcommand)]
pub enum StoreCommand {
    /// Render Cilium with helm template for a cluster spec's Cilium settings, and for the default
    /// settings of every Kubernetes version of the bundle, and store each manifest on the
    /// management cluster (ConfigMap eksa-system/cilium-manifest-KEY), where `snowctl controller
    /// --cni-stored` reads it. A manifest already stored is not rendered again.
    Cilium(StoreCiliumArgs),
}

/// `snowctl store cilium -f FILE --kubeconfig MGMT`
#[derive(Debug, Args)]
pub struct StoreCiliumArgs {
    /// The cluster spec file (its Cilium settings, Kubernetes version and registry mirror), or
    /// `-` for standard input.
    #[arg(short = 'f', long = "filename", value_name = "FILE")]
    pub file: PathBuf,
    /// Store this manifest (rendered elsewhere with helm template for the spec's settings)
    /// instead of running helm; only the spec's own settings are stored then.
    #[arg(long, value_name = "FILE")]
    pub cni_manifest: Option<PathBuf>,
    /// The release catalog; with --artifacts, helm renders the archive's charts (no registry).
    #[command(flatten)]
    pub release: ReleaseArgs,
    /// The management cluster.
    #[command(flatten)]
    pub management: ManagementArgs,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Every flag of every command, with the command's path.
    fn flags(cmd: &clap::Command, path: &str, out: &mut Vec<(String, clap::Arg)>) {
        for arg in cmd.get_arguments() {
            out.push((path.to_owned(), arg.clone()));
        }
        for sub in cmd.get_subcommands() {
            flags(sub, &format!("{path} {}", sub.get_name()), out);
        }
    }

    /// One meaning per flag across commands: `-o`/`--output` is always the output format
    /// (text, json, yaml), a written file is `--output-file`, every `--timeout`/`--*-timeout`
    /// takes a DURATION, the node OS is `--os`, and a flag name has one value name everywhere.
    #[test]
    fn a_flag_means_one_thing_in_every_command() {
        let mut all = Vec::new();
        flags(&super::Cli::command(), "snowctl", &mut all);
        assert!(all.len() > 100, "{}", all.len());
        let mut value_names: std::collections::BTreeMap<String, (String, String)> =
            Default::default();
        let mut differ = Vec::new();
        for (path, arg) in &all {
            let Some(long) = arg.get_long() else { continue };
            let values: Vec<String> = arg
                .get_possible_values()
                .iter()
                .map(|v| v.get_name().to_owned())
                .collect();
            let value_name = arg
                .get_value_names()
                .map(|v| v.join(" "))
                .unwrap_or_default();
            if long == "output" || arg.get_short() == Some('o') {
                assert_eq!(long, "output", "{path}: -o is --output");
                assert_eq!(values, ["text", "json", "yaml"], "{path} --output");
            }
            if matches!(long, "format" | "os-family" | "device-timeout") {
                differ.push(format!(
                    "{path} --{long}: renamed (--output, --os, --timeout)"
                ));
            }
            if long == "timeout" || long.ends_with("-timeout") {
                assert_eq!(value_name, "DURATION", "{path} --{long}");
            }
            if long == "os" {
                assert!(values.contains(&"bottlerocket".to_owned()), "{path} --os");
            }
            if arg.get_short() == Some('f') {
                assert_eq!(long, "filename", "{path}: -f is --filename, the input");
            }
            // Flags with a value have one value name everywhere (FILE, DURATION, …), so a
            // flag never takes a file in one command and a format in another.
            if !value_name.is_empty() && values.is_empty() {
                let seen = value_names
                    .entry(long.to_owned())
                    .or_insert_with(|| (value_name.clone(), path.clone()));
                if seen.0 != value_name {
                    differ.push(format!(
                        "--{long}: {} in {} but {value_name} in {path}",
                        seen.0, seen.1
                    ));
                }
            }
        }
        assert!(differ.is_empty(), "{differ:#?}");
        assert!(value_names.contains_key("output-file"));
    }

    /// The duration flags' defaults are the libraries' values, read back through the flags'
    /// own parser (so the text in --help parses to what the library would use).
    #[test]
    fn duration_defaults_are_the_libraries_values() {
        use clap::Parser;
        let cli =
            super::Cli::try_parse_from(["snowctl", "create", "cluster", "-f", "x.yaml"]).unwrap();
        let super::Command::Create(super::CreateCommand::Cluster(create)) = cli.command else {
            panic!("create cluster");
        };
        let timeouts = snow_provision::Timeouts::default();
        assert_eq!(
            Some(create.waits.control_plane_wait_timeout),
            timeouts.control_plane
        );
        assert_eq!(
            Some(create.waits.external_etcd_wait_timeout),
            timeouts.external_etcd
        );
        assert_eq!(
            Some(create.waits.per_machine_wait_timeout),
            timeouts.per_machine
        );
        assert_eq!(
            create.waits.poll_interval,
            snow_provision::WaitOptions::default().poll
        );
        let cli = super::Cli::try_parse_from(["snowctl", "validate", "-f", "x.yaml"]).unwrap();
        let super::Command::Validate(validate) = cli.command else {
            panic!("validate");
        };
        assert_eq!(validate.timeout, snow_validate::limits::REQUEST_TIMEOUT);
        let cli = super::Cli::try_parse_from(["snowctl", "devices", "cleanup", "edge"]).unwrap();
        let super::Command::Devices(super::DevicesCommand::Cleanup(cleanup)) = cli.command else {
            panic!("devices cleanup");
        };
        let wait = snow_validate::cleanup::WaitOptions::default();
        assert_eq!(
            (cleanup.wait_timeout, cleanup.poll_interval),
            (wait.timeout, wait.poll)
        );
    }

    /// `--existing` is `render`'s alone: create and upgrade read the live objects.
    #[test]
    fn create_and_upgrade_have_no_existing_flag() {
        let cli = super::Cli::command();
        for path in [["create", "cluster"], ["upgrade", "cluster"]] {
            let cmd = cli
                .find_subcommand(path[0])
                .and_then(|c| c.find_subcommand(path[1]))
                .unwrap();
            assert!(
                cmd.get_arguments()
                    .all(|a| a.get_long() != Some("existing")),
                "{path:?}"
            );
        }
        let render = cli.find_subcommand("render").unwrap();
        assert!(
            render
                .get_arguments()
                .any(|a| a.get_long() == Some("existing"))
        );
    }
}
