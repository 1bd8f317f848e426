//! What `--help` shows beyond the clap definitions in [`crate::args`]: examples for every
//! command and the headings `create cluster`'s flags are grouped under. They are kept here, by
//! command path and argument id, and applied to [`Cli::command`] at run time ([`command`]), so
//! that the definitions stay one place and these tables another. The tests parse every example
//! with clap, so an example with a stale flag fails them.

use crate::args::Cli;
use clap::CommandFactory;

/// One example: what it does, and the command line (after the command line, a shell tail such
/// as `> FILE` or `| kubectl apply -f -` may follow).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Example {
    /// What the example does, one line.
    pub about: &'static str,
    /// The command line, starting with `snowctl`.
    pub line: &'static str,
}

const fn ex(about: &'static str, line: &'static str) -> Example {
    Example { about, line }
}

/// The examples of each command, by its path below `snowctl` (e.g. `["create", "cluster"]`).
pub const EXAMPLES: &[(&[&str], &[Example])] = &[
    (
        &["generate", "clusterconfig"],
        &[
            ex(
                "A spec for two devices with the control-plane endpoint filled in",
                "snowctl generate clusterconfig edge --provider snow --devices 192.168.1.11,192.168.1.12 --endpoint 192.168.1.100 > edge.yaml",
            ),
            ex(
                "Bottlerocket nodes on Kubernetes 1.33, with a key pair the devices have",
                "snowctl generate clusterconfig edge --provider snow --os bottlerocket --kubernetes-version 1.33 --ssh-key-name snow-key",
            ),
            ex(
                "Nodes pulling from the mirror of `registry serve --state-dir DIR`",
                "snowctl generate clusterconfig edge --provider snow --registry-mirror 10.0.0.5:5000 --registry-mirror-ca /var/lib/snowctl-registry/ca.crt",
            ),
        ],
    ),
    (
        &["validate"],
        &[
            ex(
                "Check a spec without contacting the devices",
                "snowctl validate -f edge.yaml --offline",
            ),
            ex(
                "Check its version against the published release, then run the preflight",
                "snowctl validate -f edge.yaml --credentials credentials --ca-bundle ca-bundle.pem",
            ),
            ex(
                "The same against a given Bundles manifest (or --artifacts FILE)",
                "snowctl validate -f edge.yaml --bundles bundles.yaml --credentials credentials --ca-bundle ca-bundle.pem",
            ),
            ex(
                "The findings as JSON, for tools",
                "snowctl validate -f edge.yaml --offline -o json",
            ),
        ],
    ),
    (
        &["crds"],
        &[ex(
            "Install the EKS Anywhere Snow CRDs on a cluster",
            "snowctl crds | kubectl apply -f -",
        )],
    ),
    (
        &["credentials", "check"],
        &[ex(
            "Check the device credentials and CA bundle, device by device",
            "snowctl credentials check --credentials credentials --ca-bundle ca-bundle.pem",
        )],
    ),
    (
        &["credentials", "encode"],
        &[ex(
            "The export lines clusterctl init --infrastructure snow reads",
            "snowctl credentials encode --credentials credentials --ca-bundle ca-bundle.pem",
        )],
    ),
    (
        &["credentials", "create-scoped-user"],
        &[
            ex(
                "A user with EKS Anywhere's Snow policy on each device of a spec",
                "snowctl credentials create-scoped-user --user eksa --output-file eksa-credentials -f edge.yaml",
            ),
            ex(
                "A read-only user (Describe calls only), for import and get clusters",
                "snowctl credentials create-scoped-user --user observer --read-only --output-file read-only-credentials --devices 192.168.1.11,192.168.1.12",
            ),
        ],
    ),
    (
        &["completion"],
        &[ex(
            "Completion for bash",
            "snowctl completion bash > ~/.local/share/bash-completion/completions/snowctl",
        )],
    ),
    (
        &["render"],
        &[
            ex(
                "Every Cluster API and CAPAS object of a spec, without the identity Secret",
                "snowctl render -f edge.yaml --no-secrets",
            ),
            ex(
                "The same from a given Bundles manifest",
                "snowctl render -f edge.yaml --no-secrets --bundles bundles.yaml",
            ),
            ex(
                "An upgrade's objects: changed templates get the next name",
                "snowctl render -f edge.yaml --no-secrets --existing live.yaml",
            ),
        ],
    ),
    (
        &["download", "artifacts"],
        &[
            ex(
                "One archive for a disconnected site (Kubernetes 1.33, Ubuntu nodes)",
                "snowctl download artifacts --output-file snow-artifacts.tar --kubernetes-version 1.33 --os ubuntu",
            ),
            ex(
                "The same with the controller image, the summary as JSON",
                "snowctl download artifacts --output-file snow-artifacts.tar --kubernetes-version 1.33 --controller-image-archive snowctl-controller-v0.1.0.tar -o json",
            ),
        ],
    ),
    (
        &["import-images"],
        &[
            ex(
                "List the images a cluster needs",
                "snowctl import-images --list --kubernetes-version 1.33 --os ubuntu",
            ),
            ex(
                "Push the images of a download archive to the site registry",
                "snowctl import-images --from snow-artifacts.tar -r registry.site.local:5000/eks-a --ca-cert site-ca.pem --username admin --password-stdin < password.txt",
            ),
            ex(
                "Copy them registry to registry",
                "snowctl import-images --registry registry.site.local:5000/eks-a --kubernetes-version 1.33",
            ),
        ],
    ),
    (
        &["create", "cluster"],
        &[
            ex(
                "Create a cluster on a management cluster",
                "snowctl create cluster -f edge.yaml --kubeconfig mgmt.kubeconfig",
            ),
            ex(
                "Print what would be applied, touching nothing",
                "snowctl create cluster -f edge.yaml --dry-run",
            ),
            ex(
                "The first cluster, from nothing (kind and docker make a bootstrap cluster)",
                "snowctl create cluster -f edge.yaml",
            ),
            ex(
                "At a disconnected site, from the download archive",
                "snowctl create cluster -f edge.yaml --artifacts snow-artifacts.tar --kubeconfig mgmt.kubeconfig",
            ),
        ],
    ),
    (
        &["upgrade", "cluster"],
        &[
            ex(
                "Bring a cluster to its changed spec",
                "snowctl upgrade cluster -f edge.yaml --kubeconfig mgmt.kubeconfig",
            ),
            ex(
                "Print the plan and the objects, applying nothing",
                "snowctl upgrade cluster -f edge.yaml --kubeconfig mgmt.kubeconfig --dry-run",
            ),
        ],
    ),
    (
        &["upgrade", "management-components"],
        &[
            ex(
                "Print the plan only",
                "snowctl upgrade management-components --kubeconfig mgmt.kubeconfig --dry-run",
            ),
            ex(
                "Upgrade the stack (every cluster there is backed up first)",
                "snowctl upgrade management-components --kubeconfig mgmt.kubeconfig --credentials credentials --ca-bundle ca-bundle.pem",
            ),
        ],
    ),
    (
        &["upgrade", "plan", "cluster"],
        &[ex(
            "What an upgrade to the spec would change, as JSON",
            "snowctl upgrade plan cluster -f edge.yaml --kubeconfig mgmt.kubeconfig -o json",
        )],
    ),
    (
        &["upgrade", "plan", "management-components"],
        &[ex(
            "The installed and new versions of the management components",
            "snowctl upgrade plan management-components --kubeconfig mgmt.kubeconfig",
        )],
    ),
    (
        &["delete", "cluster"],
        &[
            ex(
                "Delete a cluster and everything snowctl applied for it",
                "snowctl delete cluster edge --kubeconfig mgmt.kubeconfig",
            ),
            ex(
                "Delete a cluster that manages itself, through a kind bootstrap cluster",
                "snowctl delete cluster -f edge.yaml --kubeconfig edge/edge-eks-a-cluster.kubeconfig",
            ),
            ex(
                "Remove only the records of an imported cluster",
                "snowctl delete cluster legacy --kubeconfig mgmt.kubeconfig --records-only",
            ),
        ],
    ),
    (
        &["describe", "cluster"],
        &[
            ex(
                "A cluster's objects as a tree, and whether its registry mirror answers",
                "snowctl describe cluster edge --kubeconfig mgmt.kubeconfig",
            ),
            ex(
                "The same as JSON",
                "snowctl describe cluster edge --kubeconfig mgmt.kubeconfig -o json",
            ),
        ],
    ),
    (
        &["renew", "certificates"],
        &[ex(
            "Replace the control-plane machines so kubeadm issues new certificates",
            "snowctl renew certificates edge --kubeconfig mgmt.kubeconfig",
        )],
    ),
    (
        &["controller"],
        &[
            ex(
                "Run the controller outside the cluster, one replica",
                "snowctl controller --kubeconfig mgmt.kubeconfig --no-leader-election --health-addr 127.0.0.1:8081",
            ),
            ex(
                "Install the Cilium manifests stored on the management cluster (no helm)",
                "snowctl controller --kubeconfig mgmt.kubeconfig --cni-stored",
            ),
        ],
    ),
    (
        &["devices", "describe"],
        &[
            ex(
                "The devices of a spec: state, capacity, instances, DNIs, AMIs, key pairs",
                "snowctl devices describe -f edge.yaml",
            ),
            ex(
                "Two devices, as JSON",
                "snowctl devices describe --devices 192.168.1.11,192.168.1.12 -o json",
            ),
        ],
    ),
    (
        &["devices", "cleanup"],
        &[
            ex(
                "Show what cluster edge left on the devices, and ask before deleting it",
                "snowctl devices cleanup edge -f edge.yaml --kubeconfig mgmt.kubeconfig",
            ),
            ex(
                "Delete it without asking",
                "snowctl devices cleanup edge -f edge.yaml --kubeconfig mgmt.kubeconfig --yes",
            ),
        ],
    ),
    (
        &["devices", "images"],
        &[ex(
            "The AMIs preflight would pick for Kubernetes 1.33 on Ubuntu",
            "snowctl devices images -f edge.yaml --kubernetes-version 1.33 --os ubuntu",
        )],
    ),
    (
        &["devices", "import-key"],
        &[ex(
            "Import a public key as key pair snow-key where it is missing",
            "snowctl devices import-key snow-key --public-key id_ed25519.pub -f edge.yaml",
        )],
    ),
    (
        &["init"],
        &[
            ex(
                "Install the Snow provider stack on a cluster",
                "snowctl init --kubeconfig mgmt.kubeconfig --credentials credentials --ca-bundle ca-bundle.pem",
            ),
            ex(
                "Print every object instead (Secret values redacted)",
                "snowctl init --kubeconfig mgmt.kubeconfig --dry-run",
            ),
            ex(
                "At a disconnected site, from the download archive",
                "snowctl init --kubeconfig mgmt.kubeconfig --artifacts snow-artifacts.tar --credentials credentials --ca-bundle ca-bundle.pem",
            ),
        ],
    ),
    (
        &["move", "cluster"],
        &[
            ex(
                "Move a cluster to another management cluster",
                "snowctl move cluster edge --kubeconfig old.kubeconfig --to-kubeconfig new.kubeconfig",
            ),
            ex(
                "Back it up to a directory",
                "snowctl move cluster edge --kubeconfig mgmt.kubeconfig --to-directory edge-backup",
            ),
            ex(
                "Restore that backup onto a management cluster",
                "snowctl move cluster --from-directory edge-backup --to-kubeconfig new.kubeconfig",
            ),
        ],
    ),
    (
        &["store", "cilium"],
        &[ex(
            "Store the Cilium manifests of a spec for the in-cluster controller",
            "snowctl store cilium -f edge.yaml --kubeconfig mgmt.kubeconfig",
        )],
    ),
    (
        &["build", "controller-image"],
        &[ex(
            "The controller image with the site's CA certificates (static snowctl only)",
            "snowctl build controller-image --output-file snowctl-controller.tar --ca-certificates site-ca-certificates.crt",
        )],
    ),
    (
        &["support-bundle"],
        &[
            ex(
                "A support bundle of cluster edge",
                "snowctl support-bundle edge --output-file edge-support.tar.gz --kubeconfig mgmt.kubeconfig",
            ),
            ex(
                "With the inventory of its devices",
                "snowctl support-bundle edge --output-file edge-support.tar.gz --kubeconfig mgmt.kubeconfig --credentials credentials --ca-bundle ca-bundle.pem --timeout 5s",
            ),
        ],
    ),
    (
        &["import", "cluster"],
        &[ex(
            "Record a running cluster observe-only, with a read-only device user",
            "snowctl import cluster legacy --kubeconfig mgmt.kubeconfig --workload-kubeconfig legacy.kubeconfig --credentials read-only-credentials --ca-bundle ca-bundle.pem",
        )],
    ),
    (
        &["get", "clusters"],
        &[
            ex(
                "Every cluster of a management cluster",
                "snowctl get clusters --kubeconfig mgmt.kubeconfig",
            ),
            ex(
                "With the instances on the devices that belong to no cluster, as JSON",
                "snowctl get clusters --kubeconfig mgmt.kubeconfig --credentials credentials --ca-bundle ca-bundle.pem -o json",
            ),
        ],
    ),
    (
        &["version"],
        &[
            ex(
                "The version, the embedded catalog, and helm, kind and docker found or not",
                "snowctl version",
            ),
            ex(
                "The same as YAML, for a support ticket",
                "snowctl version -o yaml",
            ),
        ],
    ),
    (
        &["registry", "serve"],
        &[
            ex(
                "The site's mirror with a CA made there; prints registryMirrorConfiguration",
                "snowctl registry serve --archive artifacts.tar --listen 10.0.0.5:443 --state-dir /var/lib/snowctl-registry",
            ),
            ex(
                "On every address, named in the certificate, for a spec with ociNamespaces",
                "snowctl registry serve --archive artifacts.tar --listen 0.0.0.0:443 --address 10.0.0.5 --state-dir /var/lib/snowctl-registry --oci-namespace public.ecr.aws=eks-anywhere",
            ),
            ex(
                "With a certificate of the site's own CA",
                "snowctl registry serve --archive artifacts.tar --listen 10.0.0.5:443 --cert registry.crt --key registry.key",
            ),
        ],
    ),
];

/// The headings `create cluster --help` groups its flags under, by argument id. A flag not
/// named here stays under "Options".
pub const CREATE_CLUSTER_HEADINGS: &[(&str, &[&str])] = &[
    (
        "Spec and release",
        &[
            "file",
            "bundles",
            "release_manifest",
            "eksd_releases",
            "artifacts",
            "contract",
            "cache_dir",
            "ca_certs",
        ],
    ),
    (
        "Devices",
        &[
            "credentials",
            "ca_bundle",
            "no_secrets",
            "skip_validations",
            "skip_ip_check",
        ],
    ),
    ("Management cluster", &["kubeconfig", "context", "force"]),
    (
        "Without a management cluster (from nothing)",
        &[
            "self_managed",
            "bootstrap_kubeconfig",
            "keep_bootstrap",
            "components_dir",
            "controller_image",
        ],
    ),
    ("CNI", &["cni_manifest"]),
    ("GitOps", &["flux_manifest"]),
    (
        "Waits",
        &[
            "control_plane_wait_timeout",
            "external_etcd_wait_timeout",
            "per_machine_wait_timeout",
            "no_timeouts",
            "poll_interval",
        ],
    ),
];

/// The examples of the command at `path` (empty when it has none).
pub fn examples(path: &[&str]) -> &'static [Example] {
    EXAMPLES
        .iter()
        .find(|(p, _)| *p == path)
        .map_or(&[], |(_, e)| e)
}

/// The width example lines are broken at (with a `\\` continuation), so that clap, which wraps
/// help text at the terminal's width, leaves them whole on an 80-column terminal.
pub const EXAMPLE_WIDTH: usize = 78;

/// The text `--help` shows after the flags: the examples, each under a `#` line saying what it
/// does, long lines continued with `\\` as a shell reads them.
pub fn examples_text(examples: &[Example]) -> String {
    let mut text = String::from("Examples:");
    for e in examples {
        text.push_str(&format!("\n  # {}\n  ", e.about));
        let mut width = 2;
        for (i, word) in e.line.split_whitespace().enumerate() {
            if i > 0 && width + 1 + word.len() + 2 > EXAMPLE_WIDTH {
                text.push_str(" \\\n     ");
                width = 5;
            } else if i > 0 {
                text.push(' ');
                width += 1;
            }
            text.push_str(word);
            width += word.len();
        }
    }
    text
}

/// The words clap parses of an example's line: up to the first shell operator (`|`, `>`, `<`,
/// `&&`, `;`), without the leading `snowctl`.
pub fn example_args(line: &str) -> Vec<&str> {
    line.split_whitespace()
        .take_while(|w| !matches!(*w, "|" | ">" | ">>" | "<" | "&&" | ";"))
        .collect()
}

/// The command line: [`Cli`]'s definitions with the examples and headings above applied.
pub fn command() -> clap::Command {
    with_help(Cli::command(), &mut Vec::new())
}

fn with_help(mut cmd: clap::Command, path: &mut Vec<String>) -> clap::Command {
    let words: Vec<&str> = path.iter().map(String::as_str).collect();
    if words == ["create", "cluster"] {
        cmd = with_headings(cmd);
    }
    let examples = examples(&words);
    if !examples.is_empty() {
        cmd = cmd.after_help(examples_text(examples));
    }
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_owned())
        .collect();
    for name in names {
        path.push(name.clone());
        cmd = cmd.mut_subcommand(&name, |sub| with_help(sub, path));
        path.pop();
    }
    cmd
}

fn with_headings(mut cmd: clap::Command) -> clap::Command {
    let ids: Vec<String> = cmd
        .get_arguments()
        .map(|a| a.get_id().to_string())
        .collect();
    for id in ids {
        let heading = CREATE_CLUSTER_HEADINGS
            .iter()
            .find(|(_, ids)| ids.contains(&id.as_str()))
            .map(|(heading, _)| *heading);
        if let Some(heading) = heading {
            cmd = cmd.mut_arg(&id, |a| a.help_heading(heading));
        }
    }
    cmd
}
