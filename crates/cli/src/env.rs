//! Every environment variable the CLI reads, by name, each read by the settings' resolvers from
//! the [`Environment`] they are given (a flag first when there is one: `--credentials` before
//! `EKSA_AWS_CREDENTIALS_FILE`); no flag reads one through clap. The libraries read none but `PATH` (the kind driver's lookup) and,
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

/// The SSH private key file of a GitOps repository (`ssh://`), EKS Anywhere's name.
pub const GIT_PRIVATE_KEY: &str = "EKSA_GIT_PRIVATE_KEY";
/// The `known_hosts` file of a GitOps repository's SSH server, EKS Anywhere's name.
pub const GIT_KNOWN_HOSTS: &str = "EKSA_GIT_KNOWN_HOSTS";
/// The GitOps SSH key's passphrase, EKS Anywhere's name.
pub const GIT_SSH_KEY_PASSPHRASE: &str = "EKSA_GIT_SSH_KEY_PASSPHRASE";
/// The token of a GitOps repository over `https://` (snowctl's: EKS Anywhere has none).
pub const GIT_TOKEN: &str = "SNOWCTL_GIT_TOKEN";
/// The user name sent with [`GIT_TOKEN`] as basic auth (without it, a bearer token).
pub const GIT_USERNAME: &str = "SNOWCTL_GIT_USERNAME";
/// The CA file of a GitOps repository's HTTPS server.
pub const GIT_CA_BUNDLE: &str = "SNOWCTL_GIT_CA_BUNDLE";

/// Every name above.
pub const ALL: [&str; 18] = [
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
    GIT_PRIVATE_KEY,
    GIT_KNOWN_HOSTS,
    GIT_SSH_KEY_PASSPHRASE,
    GIT_TOKEN,
    GIT_USERNAME,
    GIT_CA_BUNDLE,
];

/// The process environment snowctl's settings read, taken once (`Environment::from_process`, in
/// `run`) and handed to every resolver, so that no resolver reads `std::env` and a test gives
/// its own ([`Environment::new`] and [`Environment::with`]). The device files' variables
/// (`EKSA_AWS_CREDENTIALS_FILE`, `EKSA_AWS_CA_BUNDLES_FILE`) too (`settings::device_files`).
#[derive(Clone, Default)]
pub struct Environment {
    /// Every variable that is Unicode, by name (clusterctl-style substitution into the management
    /// components' manifests takes them all).
    vars: std::collections::BTreeMap<String, String>,
    /// The others, as the operating system gives them (paths may be any bytes).
    os: std::collections::BTreeMap<std::ffi::OsString, std::ffi::OsString>,
    /// The working directory: where a cluster's files (`./<cluster>/…`) go.
    cwd: std::path::PathBuf,
    /// Whether standard error is a terminal (a line per device while preflight runs).
    terminal: bool,
}

impl Environment {
    /// This process's variables and working directory (`.` when it cannot be read).
    pub fn from_process() -> Environment {
        let mut environment = Environment::new(
            std::env::current_dir().unwrap_or_else(|_| std::path::PathBuf::from(".")),
        );
        for (name, value) in std::env::vars_os() {
            environment = environment.with_os(name, value);
        }
        environment.terminal = std::io::IsTerminal::is_terminal(&std::io::stderr());
        environment
    }

    /// No variables, working in `cwd`, standard error no terminal.
    pub fn new(cwd: impl Into<std::path::PathBuf>) -> Environment {
        Environment {
            cwd: cwd.into(),
            ..Environment::default()
        }
    }

    /// `self` with `name` set to `value`.
    pub fn with(self, name: &str, value: &str) -> Environment {
        self.with_os(name.into(), value.into())
    }

    fn with_os(mut self, name: std::ffi::OsString, value: std::ffi::OsString) -> Environment {
        if let (Some(n), Some(v)) = (name.to_str(), value.to_str()) {
            self.vars.insert(n.to_owned(), v.to_owned());
        }
        self.os.insert(name, value);
        self
    }

    /// A variable as the operating system gives it.
    pub fn var_os(&self, name: &str) -> Option<&std::ffi::OsStr> {
        self.os
            .get(std::ffi::OsStr::new(name))
            .map(|v| v.as_os_str())
    }

    /// A variable that is Unicode (`None` when unset or not).
    pub fn var(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str)
    }

    /// A variable as a path, when set.
    pub fn path(&self, name: &str) -> Option<std::path::PathBuf> {
        self.var_os(name).map(std::path::PathBuf::from)
    }

    /// Every Unicode variable, for the management components' substitution.
    pub fn vars(&self) -> &std::collections::BTreeMap<String, String> {
        &self.vars
    }

    /// The working directory.
    pub fn cwd(&self) -> &std::path::Path {
        &self.cwd
    }

    /// Whether standard error is a terminal.
    pub fn terminal(&self) -> bool {
        self.terminal
    }
}

/// Names only: values may be secrets (`REGISTRY_PASSWORD`, tokens).
impl std::fmt::Debug for Environment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Environment")
            .field("names", &self.os.keys().collect::<Vec<_>>())
            .field("cwd", &self.cwd)
            .finish()
    }
}

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
    fn debug_shows_names_never_values() {
        let env = super::Environment::new("/w").with(super::REGISTRY_PASSWORD, "hunter2");
        let shown = format!("{env:?}");
        assert!(shown.contains("REGISTRY_PASSWORD"), "{shown}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert_eq!(env.var(super::REGISTRY_PASSWORD), Some("hunter2"));
    }

    #[test]
    fn no_flag_reads_a_variable_the_resolvers_read_them_all() {
        let mut found = Vec::new();
        flag_variables(&crate::args::Cli::command(), &mut found);
        // Through clap, a variable would be read where no resolver and no test's Environment
        // sees it.
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn the_device_files_help_names_their_variables() {
        let mut help = Vec::new();
        crate::args::Cli::command()
            .find_subcommand_mut("validate")
            .unwrap()
            .write_long_help(&mut help)
            .unwrap();
        let help = String::from_utf8(help).unwrap();
        for name in [super::CREDENTIALS_FILE, super::CA_BUNDLES_FILE] {
            assert!(help.contains(name), "{help}");
        }
    }
}
