//! The quick start of README.md: the commands are read from its marked block
//! (so the README and this test cannot drift apart) and run in order through the binary, against
//! two devices (moto and the Device API stand-in each) and the Kubernetes API stand-in with its
//! simulated Cluster API as the management cluster.
//!
//! What the test environment changes, and nothing else: the devices' addresses (loopback, where
//! the stand-ins listen), the control-plane endpoint (an address of TEST-NET-1, RFC 5737, which
//! nothing answers; the machine the tests run on may answer on the README's private address, and
//! preflight would then rightly call the endpoint in use), the release catalog (the embedded
//! sample instead of the published release: no network) and `helm` (a script on `PATH` that
//! prints the Cilium fixture, as `helm template` would).

use super::lifecycle::{CILIUM, management};
use super::{sample_release, show, text};
use snow_test_devices::TestCa;
use std::path::Path;
use std::process::Output;

const README: &str = include_str!("../../../../README.md");
const MARKER: &str = "<!-- quick start: crates/cli/tests/it/quick_start.rs runs this block (on loopback stand-ins) -->";
/// The devices and endpoint of the README's commands, and what the test puts in their place.
const README_DEVICES: [&str; 2] = ["192.168.1.11", "192.168.1.12"];
const README_ENDPOINT: &str = "192.168.1.100";
const TEST_ENDPOINT: &str = "192.0.2.100";

/// One line of the block.
#[derive(Debug)]
enum Step {
    /// `export NAME=VALUE …`
    Export(Vec<(String, String)>),
    /// `snowctl ARGS… [> FILE]`
    Snowctl {
        args: Vec<String>,
        stdout_to: Option<String>,
    },
}

/// The marked block's lines, as steps.
fn quick_start() -> Vec<Step> {
    let at = README
        .find(MARKER)
        .expect("README.md has the quick start marker");
    let rest = &README[at + MARKER.len()..];
    let rest = rest
        .trim_start()
        .strip_prefix("```sh\n")
        .expect("a ```sh block follows the marker");
    let block = &rest[..rest.find("```").expect("the block ends")];
    let mut steps = Vec::new();
    for line in block.lines() {
        // A `#` word starts a comment.
        let words: Vec<&str> = line
            .split_whitespace()
            .take_while(|w| !w.starts_with('#'))
            .collect();
        match words.split_first() {
            None => {}
            Some((&"export", vars)) => steps.push(Step::Export(
                vars.iter()
                    .map(|v| {
                        let (name, value) = v.split_once('=').expect("export NAME=VALUE");
                        (name.to_owned(), value.to_owned())
                    })
                    .collect(),
            )),
            Some((&"snowctl", args)) => {
                let (args, stdout_to) = match args {
                    [args @ .., ">", file] => (args, Some((*file).to_owned())),
                    args => (args, None),
                };
                assert!(
                    !args.iter().any(|w| ["|", ">", "<", "&&", ";"].contains(w)),
                    "the test runs one snowctl per line, with at most `> FILE`: {line}"
                );
                steps.push(Step::Snowctl {
                    args: args.iter().map(|w| (*w).to_owned()).collect(),
                    stdout_to,
                });
            }
            Some(_) => panic!("the quick start test cannot run this line: {line}"),
        }
    }
    steps
}

/// A tagged AMI for `version` and `os` on every device, as preflight looks one up when the spec's
/// `amiID` is empty.
async fn seed_amis(fleet: &snow_test_devices::fleet::Fleet, version: &str, os: &str) {
    use snow_validate::aws_sdk_ec2::types::Tag;
    for device in &fleet.devices {
        let ec2 = device.ec2();
        let image = ec2
            .register_image()
            .name(format!("eks-d-{version}-{os}"))
            .send()
            .await
            .expect("RegisterImage");
        ec2.create_tags()
            .resources(image.image_id().unwrap())
            .tags(
                Tag::builder()
                    .key("eksa.aws.com/k8s-version")
                    .value(version)
                    .build(),
            )
            .tags(
                Tag::builder()
                    .key("eksa.aws.com/os-family")
                    .value(os)
                    .build(),
            )
            .send()
            .await
            .expect("CreateTags");
    }
}

/// The value of `key: value` (quotes dropped) at its first occurrence in a YAML text.
fn yaml_value<'a>(text: &'a str, key: &str) -> &'a str {
    let line = text
        .lines()
        .find_map(|l| l.trim().strip_prefix(&format!("{key}:")))
        .unwrap_or_else(|| panic!("no {key} in\n{text}"));
    line.trim().trim_matches('"')
}

async fn run(dir: &Path, args: Vec<String>, env: &[(String, String)], path: &str) -> Output {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_snowctl"));
    cmd.args(args)
        .current_dir(dir)
        .env_remove("KUBECONFIG")
        .env_remove("EKSA_AWS_CREDENTIALS_FILE")
        .env_remove("EKSA_AWS_CA_BUNDLES_FILE")
        .env("PATH", path)
        .envs(env.iter().map(|(k, v)| (k, v)));
    tokio::task::spawn_blocking(move || cmd.output().expect("snowctl runs"))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readme_quick_start_creates_a_cluster_on_the_stand_ins() {
    let steps = quick_start();
    assert!(steps.len() >= 4, "{steps:?}");

    let m = management().await;
    let dir = m.dir.path();
    std::fs::copy(&m.kubeconfig, dir.join("mgmt.kubeconfig")).unwrap();
    let ca = TestCa::new("quick start devices").unwrap();
    let fleet = snow_test_devices::fleet::fleet(&ca, 2, &[]).await;
    // The files the README's directory holds: `credentials` and `ca-bundle.pem`.
    fleet.write_files(&ca, &[], dir);
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let helm = bin.join("helm");
    std::fs::write(
        &helm,
        format!("#!/bin/sh\ncat > /dev/null\ncat '{CILIUM}'\n"),
    )
    .unwrap();
    std::fs::set_permissions(&helm, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!("{}:/usr/bin:/bin", bin.display());

    let mut env: Vec<(String, String)> = Vec::new();
    let mut ran = Vec::new();
    for step in steps {
        let (args, stdout_to) = match step {
            Step::Export(vars) => {
                env.extend(vars);
                continue;
            }
            Step::Snowctl { args, stdout_to } => (args, stdout_to),
        };
        let args: Vec<String> = (args.iter())
            .map(|a| {
                let mut a = a.replace(README_ENDPOINT, TEST_ENDPOINT);
                for (readme, ip) in README_DEVICES.iter().zip(&fleet.ips) {
                    a = a.replace(readme, &ip.to_string());
                }
                a
            })
            .collect();
        let line = format!("snowctl {}", args.join(" "));
        let out = run(dir, sample_release(&args), &env, &path).await;
        assert!(out.status.success(), "{line}\n{}", show(&out));
        if let Some(file) = stdout_to {
            std::fs::write(dir.join(file), &out.stdout).unwrap();
        }
        if args.starts_with(&["generate".to_owned(), "clusterconfig".to_owned()]) {
            let spec = text(&out.stdout);
            let version = yaml_value(&spec, "kubernetesVersion");
            seed_amis(&fleet, version, yaml_value(&spec, "osFamily")).await;
        }
        ran.push((args, out));
    }

    // What the README says each step does.
    let find = |verb: &[&str]| {
        (ran.iter())
            .filter(|(args, _)| {
                args.iter()
                    .map(String::as_str)
                    .take(verb.len())
                    .eq(verb.iter().copied())
            })
            .map(|(args, out)| (args, text(&out.stdout), text(&out.stderr)))
            .collect::<Vec<_>>()
    };
    let validated = find(&["validate"]);
    let preflight = (validated.iter())
        .find(|(args, ..)| !args.iter().any(|a| a == "--offline"))
        .expect("the quick start checks the devices");
    for ip in &fleet.ips {
        assert!(preflight.1.contains(&ip.to_string()), "{}", preflight.1);
    }
    let created = find(&["create", "cluster"]);
    let (_, _, stderr) = created.first().expect("the quick start creates a cluster");
    for line in [
        "Rendering Cilium with helm template",
        "Control plane ready (3/3)",
        "Worker group md-0 ready (3/3)",
        "Wrote the workload kubeconfig ./edge/edge-eks-a-cluster.kubeconfig",
        "Cluster edge created!",
    ] {
        assert!(stderr.contains(line), "missing {line:?}\n{stderr}");
    }
    assert!(!stderr.contains("--skip-validations"), "{stderr}");
    assert!(dir.join("edge/edge-eks-a-cluster.kubeconfig").is_file());
    assert!(dir.join("edge/eks-a-id_rsa").is_file());
    let described = find(&["describe", "cluster"]);
    let (_, stdout, _) = described
        .first()
        .expect("the quick start describes the cluster");
    assert!(
        stdout.contains("✓ KubeadmControlPlane/edge  3/3 ready"),
        "{stdout}"
    );
}
