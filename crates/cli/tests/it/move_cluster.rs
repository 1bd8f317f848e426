//! `snowctl move cluster`: its help, usage errors, an unreachable target and a broken backup
//! directory, through the real binary. The move itself is tested object by object in
//! snow-lifecycle's `tests/move_cluster.rs`.

use assert_cmd::Command;
use snow_test_kube::KubeStandIn;

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(args: &[&std::ffi::OsStr]) -> Run {
    let out = Command::cargo_bin("snowctl")
        .expect("binary is built")
        .env_remove("KUBECONFIG")
        .args(args)
        .output()
        .expect("runs");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn os(s: &str) -> &std::ffi::OsStr {
    std::ffi::OsStr::new(s)
}

#[test]
fn move_cluster_help_and_usage_errors() {
    let help = run(&[os("move"), os("cluster"), os("--help")]);
    assert_eq!(help.code, 0);
    insta::assert_snapshot!("move_cluster_help", help.stdout);

    // No destination; both destinations; a restore without a target: usage errors.
    for args in [
        vec!["move", "cluster", "edge", "--kubeconfig", "k"],
        vec![
            "move",
            "cluster",
            "edge",
            "--kubeconfig",
            "k",
            "--to-kubeconfig",
            "t",
            "--to-directory",
            "d",
        ],
        vec!["move", "cluster", "--from-directory", "d"],
    ] {
        let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| os(a)).collect();
        let r = run(&args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
    }
    // No source kubeconfig.
    let r = run(&[
        os("move"),
        os("cluster"),
        os("edge"),
        os("--to-directory"),
        os("d"),
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("pass --kubeconfig FILE"), "{}", r.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_target_and_a_broken_backup_are_clear_errors() {
    let source = KubeStandIn::start().await.expect("stand-in");
    let target = KubeStandIn::start().await.expect("stand-in");
    let dir = tempfile::tempdir().unwrap();
    let from = source.write_kubeconfig(dir.path()).unwrap();
    let to_dir = dir.path().join("target");
    std::fs::create_dir(&to_dir).unwrap();
    let to = target.write_kubeconfig(&to_dir).unwrap();
    target.stop();
    let r = run(&[
        os("move"),
        os("cluster"),
        os("edge"),
        os("--kubeconfig"),
        from.as_os_str(),
        os("--to-kubeconfig"),
        to.as_os_str(),
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("cannot reach the management cluster at https://127.0.0.1:"),
        "{}",
        r.stderr
    );

    let backup = dir.path().join("backup");
    std::fs::create_dir(&backup).unwrap();
    std::fs::write(
        backup.join("Cluster_eksa-system_edge.yaml"),
        "kind: Cluster\n",
    )
    .unwrap();
    let r = run(&[
        os("move"),
        os("cluster"),
        os("--from-directory"),
        backup.as_os_str(),
        os("--to-kubeconfig"),
        from.as_os_str(),
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("Cluster_eksa-system_edge.yaml: not an object of a backup (missing apiVersion, metadata.name, metadata.namespace, metadata.uid)"),
        "{}",
        r.stderr
    );
    assert!(r.stdout.is_empty());
}
