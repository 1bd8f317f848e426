//! Every environment variable the CLI reads, by name: flags' fallbacks (clap's `env`) and the
//! values settings resolve. The libraries read none but `PATH` (the kind driver's lookup) and,
//! through kube-rs's in-cluster configuration, `KUBERNETES_SERVICE_HOST`/`PORT` (a controller in
//! a pod); what they need from the environment the CLI passes in.

/// The management cluster's kubeconfig files when `--kubeconfig` is not given: a list
/// separated by ':', merged as kubectl merges it (`settings::find_kubeconfig`).
pub const KUBECONFIG: &str = "KUBECONFIG";
/// The devices' AWS credentials INI (`--credentials`), EKS Anywhere's name.
pub const CREDENTIALS_FILE: &str = "EKSA_AWS_CREDENTIALS_FILE";
/// The devices' CA bundle (`--ca-bundle`), EKS Anywhere's name.
pub const CA_BUNDLES_FILE: &str = "EKSA_AWS_CA_BUNDLES_FILE";
/// The registry mirror's CA file, for a spec whose `caCertContent` is empty.
pub const REGISTRY_MIRROR_CA: &str = "EKSA_REGISTRY_MIRROR_CA";
/// The registry mirror's username (`authenticate: true`).
pub const REGISTRY_USERNAME: &str = "REGISTRY_USERNAME";
/// The registry mirror's password (`authenticate: true`).
pub const REGISTRY_PASSWORD: &str = "REGISTRY_PASSWORD";
/// The Docker config's directory (`config.json`), for registry credentials.
pub const DOCKER_CONFIG: &str = "DOCKER_CONFIG";
/// The home directory: `~/.docker`, `~/.cache` and `~/.kube/config`.
pub const HOME: &str = "HOME";
/// The cache's parent directory, before `~/.cache`.
pub const XDG_CACHE_HOME: &str = "XDG_CACHE_HOME";
/// The controller's log filter (tracing's `EnvFilter`).
pub const RUST_LOG: &str = "RUST_LOG";
/// Set to anything but empty: plain output, no decoration (no-color.org).
pub const NO_COLOR: &str = "NO_COLOR";
/// Where `snowctl version` looks for helm, kind and docker (the libraries look there too).
pub const PATH: &str = "PATH";

/// Every name above.
pub const ALL: [&str; 12] = [
    KUBECONFIG,
    CREDENTIALS_FILE,
    CA_BUNDLES_FILE,
    REGISTRY_MIRROR_CA,
    REGISTRY_USERNAME,
    REGISTRY_PASSWORD,
    DOCKER_CONFIG,
    HOME,
    XDG_CACHE_HOME,
    RUST_LOG,
    NO_COLOR,
    PATH,
];

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// The environment variables of every flag of every command.
    fn flag_variables(cmd: &clap::Command, out: &mut Vec<String>) {
        for arg in cmd.get_arguments() {
            if let Some(name) = arg.get_env() {
                out.push(name.to_string_lossy().into_owned());
            }
        }
        for sub in cmd.get_subcommands() {
            flag_variables(sub, out);
        }
    }

    #[test]
    fn every_flag_reads_a_variable_named_here() {
        let mut found = Vec::new();
        flag_variables(&crate::args::Cli::command(), &mut found);
        assert!(found.len() > 3, "{found:?}");
        for name in &found {
            assert!(super::ALL.contains(&name.as_str()), "{name} is not in env");
        }
        // KUBECONFIG is a list, resolved by settings::find_kubeconfig, never a flag's value.
        assert!(!found.iter().any(|f| f == super::KUBECONFIG), "{found:?}");
        for name in [super::CREDENTIALS_FILE, super::CA_BUNDLES_FILE] {
            assert!(found.iter().any(|f| f == name), "no flag reads {name}");
        }
    }
}
