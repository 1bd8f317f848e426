//! Copies between two real `docker-registry` instances on loopback: the source over plain HTTP,
//! the target over TLS from a CA made by the test.

use snow_test_devices::registry as support;

use snow_images::{
    CopyConfig, Credentials, ImageStatus, NoProgress, Progress, TargetRegistry, copy_images, plan,
};
use std::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering},
};
use support::{Registry, Tls};

const PREFIX: &str = "public.ecr.aws";

fn config(source: &Registry, target: &Registry, tls: &Tls) -> CopyConfig {
    CopyConfig {
        target: TargetRegistry::parse(&format!("{}/mirror", target.host)).unwrap(),
        source_registry: Some(source.host.clone()),
        all_platforms: false,
        concurrency: 3,
        ca_certs_pem: vec![tls.ca_pem.clone().into_bytes()],
        plain_http: vec![source.host.clone()],
        credentials: Credentials::default(),
    }
}

fn uri(p: &support::Pushed) -> String {
    format!("{PREFIX}/{}:{}", p.path, p.tag)
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn copy_is_exact_amd64_only_and_a_rerun_copies_nothing() {
    let tls = Tls::generate();
    let (source, target) = (Registry::start(None), Registry::start(Some(&tls)));
    rt().block_on(async {
        let src = support::client(&[&source], None);
        let shared = vec![support::random_bytes(64 * 1024)];
        let a = support::push_image(
            &src,
            &source,
            "eks-distro/kubernetes/pause",
            "v1",
            2,
            32 * 1024,
            &shared,
        )
        .await;
        let b = support::push_image(
            &src,
            &source,
            "aws/cluster-api-provider-aws-snow/manager",
            "v0.3.3",
            1,
            32 * 1024,
            &shared,
        )
        .await;
        let multi =
            support::push_multi_platform(&src, &source, "kube-vip/kube-vip", "v1.2.0", 48 * 1024)
                .await;
        let cfg = config(&source, &target, &tls);
        let copies = plan(&[uri(&a), uri(&b), uri(&multi)], &cfg).unwrap();
        assert_eq!(
            copies[0].target,
            format!("{}/mirror/eks-distro/kubernetes/pause:v1", target.host)
        );

        let report = copy_images(&copies, &cfg, Arc::new(NoProgress)).await;
        assert_eq!(report.failed(), 0, "{report:#?}");
        assert_eq!(report.copied(), 3);
        // The shared layer is streamed once; the second repository gets it by mount or finds it.
        let streamed = report.blobs_copied();
        // a: config + shared + 2; b: config + 1 (+ shared not streamed); multi amd64: config + 1.
        assert_eq!(streamed, 4 + 2 + 2, "{report:#?}");

        let dst = support::client(&[], Some(&tls.ca_pem));
        for p in [&a, &b] {
            let (_, digest) = support::manifest(
                &dst,
                &format!("{}/mirror/{}:{}", target.host, p.path, p.tag),
            )
            .await;
            assert_eq!(digest, p.digest, "manifest digest of {}", p.path);
            for layer in &p.layers {
                assert!(
                    support::has_blob(&dst, &target, &format!("mirror/{}", p.path), layer).await
                );
            }
        }
        // The index is rewritten to linux/amd64 only; arm64's layer is not copied.
        let (body, digest) = support::manifest(
            &dst,
            &format!("{}/mirror/kube-vip/kube-vip:v1.2.0", target.host),
        )
        .await;
        assert_eq!(digest, support::sha256(&body));
        assert_ne!(digest, multi.digest);
        let index: serde_json::Value = serde_json::from_slice(&body).unwrap();
        let entries = index["manifests"].as_array().unwrap();
        assert_eq!(entries.len(), 1);
        let (_, amd64_digest, amd64_layers) = &multi.platforms[0];
        assert_eq!(entries[0]["digest"], amd64_digest.as_str());
        assert_eq!(report.images[2].digest.as_deref(), Some(digest.as_str()));
        let (_, child) = support::manifest(
            &dst,
            &format!("{}/mirror/kube-vip/kube-vip@{amd64_digest}", target.host),
        )
        .await;
        assert_eq!(&child, amd64_digest);
        assert!(
            support::has_blob(&dst, &target, "mirror/kube-vip/kube-vip", &amd64_layers[0]).await
        );
        let (_, _, arm64_layers) = &multi.platforms[1];
        assert!(
            !support::has_blob(&dst, &target, "mirror/kube-vip/kube-vip", &arm64_layers[0]).await
        );

        // A re-run finds every tag at the same digest and transfers nothing.
        let again = copy_images(&copies, &cfg, Arc::new(NoProgress)).await;
        assert_eq!(again.up_to_date(), 3, "{again:#?}");
        assert_eq!(again.blobs_copied(), 0);
        assert_eq!(again.bytes(), 0);

        // --all-platforms keeps the index byte for byte (another namespace, same target).
        let mut all = cfg.clone();
        all.all_platforms = true;
        all.target.namespace = "all".into();
        let copies = plan(&[uri(&multi)], &all).unwrap();
        let report = copy_images(&copies, &all, Arc::new(NoProgress)).await;
        assert_eq!(report.failed(), 0, "{report:#?}");
        let (_, digest) = support::manifest(
            &dst,
            &format!("{}/all/kube-vip/kube-vip:v1.2.0", target.host),
        )
        .await;
        assert_eq!(digest, multi.digest);
        assert!(support::has_blob(&dst, &target, "all/kube-vip/kube-vip", &arm64_layers[0]).await);
    });
}

#[test]
fn a_failed_image_does_not_stop_the_others_and_an_untrusted_ca_fails() {
    let tls = Tls::generate();
    let (source, target) = (Registry::start(None), Registry::start(Some(&tls)));
    rt().block_on(async {
        let src = support::client(&[&source], None);
        let a = support::push_image(&src, &source, "cilium/cilium", "v1", 1, 1024, &[]).await;
        let cfg = config(&source, &target, &tls);
        let copies = plan(&[uri(&a), format!("{PREFIX}/does/not-exist:v9")], &cfg).unwrap();
        let report = copy_images(&copies, &cfg, Arc::new(NoProgress)).await;
        assert_eq!(report.copied(), 1, "{report:#?}");
        assert_eq!(report.failed(), 1);
        assert!(matches!(
            report.images[1].status,
            ImageStatus::Failed { .. }
        ));

        // Without the CA the TLS registry is refused.
        let mut untrusted = cfg.clone();
        untrusted.ca_certs_pem.clear();
        untrusted.target.namespace = "other".into();
        let copies = plan(&[uri(&a)], &untrusted).unwrap();
        let report = copy_images(&copies, &untrusted, Arc::new(NoProgress)).await;
        assert_eq!(report.failed(), 1, "{report:#?}");
    });
}

/// Stops the run (by dropping its future) after `after` blobs are in the target.
struct Interrupt {
    done: AtomicUsize,
    after: usize,
    notify: tokio::sync::Notify,
}

impl Progress for Interrupt {
    fn blob_done(&self, _index: usize, _digest: &str) {
        if self.done.fetch_add(1, Ordering::SeqCst) + 1 == self.after {
            self.notify.notify_one();
        }
    }
}

#[test]
fn an_interrupted_run_resumes_without_copying_again() {
    let tls = Tls::generate();
    let (source, target) = (Registry::start(None), Registry::start(Some(&tls)));
    rt().block_on(async {
        let src = support::client(&[&source], None);
        let a =
            support::push_image(&src, &source, "etcd-io/etcd", "v3.5", 6, 256 * 1024, &[]).await;
        let mut cfg = config(&source, &target, &tls);
        cfg.concurrency = 1;
        let copies = plan(&[uri(&a)], &cfg).unwrap();

        let interrupt = Arc::new(Interrupt {
            done: AtomicUsize::new(0),
            after: 3,
            notify: tokio::sync::Notify::new(),
        });
        let run = copy_images(&copies, &cfg, interrupt.clone());
        tokio::select! {
            _ = run => panic!("the run finished before it was interrupted"),
            () = interrupt.notify.notified() => {}
        }
        // The tag was never written.
        let dst = support::client(&[], Some(&tls.ca_pem));
        let r: oci_client::Reference = format!("{}/mirror/etcd-io/etcd:v3.5", target.host)
            .parse()
            .unwrap();
        assert!(
            dst.fetch_manifest_digest(&r, &oci_client::secrets::RegistryAuth::Anonymous)
                .await
                .is_err()
        );

        let resumed = copy_images(&copies, &cfg, Arc::new(NoProgress)).await;
        match &resumed.images[0].status {
            ImageStatus::Copied {
                blobs_copied,
                blobs_skipped,
                ..
            } => {
                assert!(*blobs_skipped >= 3, "{resumed:#?}");
                assert_eq!(blobs_copied + blobs_skipped, 7, "{resumed:#?}");
            }
            other => panic!("{other:?}"),
        }
        let (_, digest) =
            support::manifest(&dst, &format!("{}/mirror/etcd-io/etcd:v3.5", target.host)).await;
        assert_eq!(digest, a.digest);
    });
}
