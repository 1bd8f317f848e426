//! The facade's operations on one cluster (`snow_provision::cluster`, `store_cilium`,
//! `support_bundle::after_failure`) on a cluster `create` made on the Kubernetes API stand-in:
//! describe, the upgrade plan with the default key the create recorded, the certificates'
//! renewal, a backup to a directory restored onto a second management cluster, the support
//! bundle after a failure, and the refusals (a cluster that is not there, records removal of a
//! managed cluster). What only the binary does is tested in `crates/cli/tests/it`.

// Progress goes to stderr: the test harness shows it when a test fails.
#![allow(clippy::print_stderr)]

mod support;

use snow_lifecycle::{KubeconfigSource, LifecycleError, MoveOptions, RenewOptions};
use snow_provision::{
    Checks, ProvisionError, StoredCiliumSource, StoredOutcome,
    cluster::{self, MoveTarget},
};
use std::time::Duration;
use support::{CILIUM, common, create, site, wait, with_request};

fn moving() -> MoveOptions {
    MoveOptions {
        settle: Duration::from_millis(300),
        settle_timeout: Duration::from_secs(20),
        ..MoveOptions::default()
    }
}

/// Catches: a plan made without the recorded default key (it would show every machine rolling
/// onto an empty key name); describe not connecting to the kubeconfig given, or answering for a
/// cluster that is not there; a renewal that replaces no control-plane machine; a backup that
/// writes nothing or a restore that applies nothing on the target; no bundle written after a
/// failure, or written elsewhere than beside the cluster's files; the cluster's Cilium manifest
/// not stored; the records of a managed cluster removed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_created_cluster_is_described_planned_renewed_backed_up_and_restored() {
    let site = site().await;
    let text = site.spec(1);
    let (created, _) = create(&site, &text, Checks::Skip, false).await;
    created.expect("create");
    let management = KubeconfigSource::file(&site.kubeconfig);

    let described = cluster::describe(&management, "edge")
        .await
        .expect("describe");
    assert!(described.root.is_some());
    let missing = cluster::describe(&management, "nope").await;
    assert!(
        matches!(
            missing,
            Err(ProvisionError::Lifecycle(LifecycleError::NotFound { .. }))
        ),
        "{missing:?}"
    );

    let (plan, _) = with_request(&site, &text, async |req, on_event| {
        cluster::upgrade_plan(&management, req, on_event).await
    })
    .await;
    let plan = plan.expect("plan");
    assert_eq!(plan.cluster, "edge");
    assert!(
        plan.rolls.is_empty(),
        "the spec as created rolls nothing: {plan:?}"
    );

    let renew = RenewOptions { wait: wait() };
    let renewed = cluster::renew_certificates(&management, "edge", &renew, &mut |e| {
        eprintln!("{e}");
    })
    .await
    .expect("renew");
    assert!(!renewed.replaced.is_empty(), "{renewed:?}");
    assert!(
        renewed
            .machines
            .iter()
            .all(|m| !renewed.replaced.contains(m))
    );

    let mgmt = cluster::connect(&management).await.expect("connect");
    let release_inputs = snow_api::release::ReleaseInputs::embedded().expect("catalog");
    let spec = snow_api::check(&text).unwrap().into_valid().unwrap();
    let release = release_inputs.resolve(&spec, None).expect("release");
    let source = StoredCiliumSource::Given(CILIUM.to_owned());
    let stored = snow_provision::store_cilium(&mgmt, &spec, &release, None, &source, &mut |_| {})
        .await
        .expect("store");
    assert_eq!(stored.len(), 1, "{stored:?}");
    assert!(stored[0].own);
    assert!(
        matches!(
            stored[0].outcome,
            StoredOutcome::Written | StoredOutcome::Unchanged
        ),
        "{stored:?}"
    );

    support::label_crds_as_clusterctl(&site.api);
    let backups = tempfile::tempdir().unwrap();
    let to = MoveTarget::Directory(backups.path());
    let written = cluster::move_cluster(&management, "edge", to, &moving(), &mut |_| {})
        .await
        .expect("backup");
    assert!(written.objects > 0, "{written:?}");
    assert_eq!(written.deleted, 0, "a backup keeps the source's objects");
    let (target, _target_capi) = common::with_capi().await;
    support::label_crds_as_clusterctl(&target);
    let target_dir = tempfile::tempdir().unwrap();
    let target_kubeconfig = target.write_kubeconfig(target_dir.path()).unwrap();
    let target_source = KubeconfigSource::file(&target_kubeconfig);
    let restored = cluster::restore(backups.path(), &target_source, &moving(), &mut |_| {})
        .await
        .expect("restore");
    assert_eq!(restored.objects, written.objects);
    let on_target = target.get(
        "cluster.x-k8s.io/v1beta2",
        "Cluster",
        Some("eksa-system"),
        "edge",
    );
    assert!(on_target.is_some(), "the restored Cluster is on the target");

    let bundle =
        snow_provision::support_bundle::after_failure(&management, site.dir.path(), "edge")
            .await
            .expect("bundle");
    assert_eq!(
        bundle.path.parent(),
        Some(site.dir.path().join("edge").as_path())
    );
    assert!(bundle.path.is_file() && bundle.bytes > 0);

    let refused = cluster::remove_import_records(&management, "edge", &wait()).await;
    assert!(
        matches!(
            refused,
            Err(ProvisionError::Lifecycle(
                LifecycleError::NotImported { .. }
            ))
        ),
        "{refused:?}"
    );
    let still = site.api.get(
        "cluster.x-k8s.io/v1beta2",
        "Cluster",
        Some("eksa-system"),
        "edge",
    );
    assert!(still.is_some(), "a refused removal removes nothing");
}

/// Catches: a move that reads the source when the target cannot be reached (the target is
/// connected to first, so its error is the one said).
#[tokio::test]
async fn a_move_to_a_target_that_cannot_be_read_says_the_target() {
    let (api, _capi) = common::with_capi().await;
    let dir = tempfile::tempdir().unwrap();
    let source = KubeconfigSource::file(api.write_kubeconfig(dir.path()).unwrap());
    let missing = KubeconfigSource::file(dir.path().join("no-such-kubeconfig"));
    let to = MoveTarget::Cluster(&missing);
    let before = api.requests().len();
    let moved = cluster::move_cluster(&source, "edge", to, &moving(), &mut |_| {}).await;
    let err = moved.expect_err("no target");
    assert!(err.is_input(), "{err:?}");
    assert_eq!(api.requests().len(), before, "the source is not read");
}
