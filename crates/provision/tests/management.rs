//! The management components through the facade (`snow_provision::management`): the
//! controller's component and its place in the stack, then the provider stack installed on the
//! Kubernetes API stand-in, planned and upgraded (with the backup of every cluster there first).

mod support;

use capi_render::controller::{MAX_RELEASE_BYTES, ReleaseFiles};
use snow_lifecycle::{
    Event, KubeconfigSource,
    init::{InitOptions, components::Component},
};
use snow_provision::{ProvisionError, management};
use snow_test_kube::{KubeStandIn, WorkloadOptions};
use std::time::Duration;

fn release() -> ReleaseFiles {
    ReleaseFiles {
        bundles: "kind: Bundles\n".into(),
        eksd: vec!["kind: Release\n".into()],
    }
}

/// Catches: a controller component made up without an image; the image given not used; a
/// catalog larger than the controller's ConfigMap accepted; the controller not last in the stack.
#[test]
fn the_controller_needs_an_image_fits_its_configmap_and_goes_last() {
    let none = management::controller_component(None, None, &release()).expect("no error");
    assert!(none.is_none());
    let image = "registry.example/snowctl/controller:v1";
    let made = management::controller_component(Some(image), None, &release()).expect("made");
    let controller = made.expect("a component with the image given");
    assert_eq!(snow_lifecycle::init::controller::image(&controller), image);
    let big = ReleaseFiles {
        bundles: "x".repeat(MAX_RELEASE_BYTES + 1),
        eksd: Vec::new(),
    };
    let refused = management::controller_component(Some(image), None, &big);
    let err = refused.expect_err("too large");
    assert!(
        matches!(err, ProvisionError::CatalogTooLarge { .. }),
        "{err:?}"
    );
    assert!(err.is_input());

    let providers = support::providers();
    let count = providers.len();
    let stack = management::stack(providers, Some(controller));
    assert_eq!(stack.len(), count + 1);
    assert_eq!(
        stack.last().map(|c| c.component),
        Some(Component::Controller)
    );
    assert!(
        stack[..count]
            .iter()
            .all(|c| c.component != Component::Controller)
    );
}

/// Catches: init not installing the stack; a plan that sees work after an install of the same
/// stack; an upgrade that changes an up-to-date stack, or that says a backup of a management
/// cluster with no clusters.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stack_is_installed_then_planned_and_upgraded_as_up_to_date() {
    let api = KubeStandIn::start().await.expect("stand-in");
    let _workloads = api.start_workloads(WorkloadOptions::default());
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = api.write_kubeconfig(dir.path()).unwrap();
    let mgmt = snow_provision::cluster::connect(&KubeconfigSource::file(&kubeconfig))
        .await
        .expect("connect");
    let options = InitOptions {
        crd_timeout: Duration::from_secs(20),
        deployment_timeout: Some(Duration::from_secs(20)),
        poll: Duration::from_millis(20),
    };
    let stack = management::stack(support::providers(), None);
    let installed = management::init(&mgmt, &stack, &options, &mut |_| {}).await;
    assert!(!installed.expect("init").unchanged());

    let plan = management::upgrade_plan(&mgmt, &stack).await.expect("plan");
    assert!(plan.up_to_date(), "{plan}");

    let mut events = Vec::new();
    let say = |b: &snow_lifecycle::Backup| format!("backup {}", b.cluster);
    let upgraded = management::upgrade(
        &mgmt,
        &stack,
        &options,
        Some(dir.path()),
        &mut |e| events.push(e),
        &say,
    )
    .await
    .expect("upgrade");
    assert!(upgraded.unchanged());
    let said_backup = events
        .iter()
        .any(|e| matches!(e, Event::Note(n) if n.starts_with("backup ")));
    assert!(!said_backup, "no cluster, no backup: {events:?}");
}
