//! The versions of a cluster's components as its Cluster API objects say them: read the same way
//! from rendered objects (what an upgrade would run) and from live ones (what runs now), so
//! `upgrade plan` compares like with like.

use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeSet;

/// The components read from the objects, in the order a plan shows them.
pub const COMPONENTS: [&str; 6] = [
    "Kubernetes",
    "etcd",
    "CoreDNS",
    "kube-vip",
    "node AMI",
    "node OS",
];

/// One component's version, or `None` when the objects do not say it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ComponentVersion {
    /// One of [`COMPONENTS`].
    pub component: String,
    /// The version (several, comma-separated, when machine templates differ).
    pub version: Option<String>,
}

fn kind<'a>(objects: &'a [Value], kind: &str) -> impl Iterator<Item = &'a Value> {
    let kind = kind.to_owned();
    objects.iter().filter(move |o| o["kind"] == kind.as_str())
}

fn text(value: &Value) -> Option<String> {
    value.as_str().filter(|s| !s.is_empty()).map(str::to_owned)
}

/// The tag of the first image `…/<name>:<tag>` in `text`.
fn image_tag(text: &str, name: &str) -> Option<String> {
    let needle = format!("/{name}:");
    let start = text.find(&needle)? + needle.len();
    let tag: String = text[start..]
        .chars()
        .take_while(|c| !c.is_whitespace() && *c != '"' && *c != '\'')
        .collect();
    (!tag.is_empty()).then_some(tag)
}

/// Distinct values, sorted, comma-separated; `None` when there are none.
fn distinct(values: impl Iterator<Item = String>) -> Option<String> {
    let set: BTreeSet<String> = values.collect();
    (!set.is_empty()).then(|| set.into_iter().collect::<Vec<_>>().join(", "))
}

/// Each of [`COMPONENTS`] as `objects` (a cluster's KubeadmControlPlane, EtcdadmCluster and
/// AWSSnowMachineTemplates, rendered or live) say it: Kubernetes from the KCP's `spec.version`;
/// etcd from the KCP's local etcd `imageTag`, else the EtcdadmCluster's `cloudInitConfig.version`
/// or Bottlerocket `etcdImage` tag; CoreDNS from the KCP's `dns.imageTag`; kube-vip from the
/// image tag in the KCP's static pod file; the node AMIs and OS families from the machine
/// templates of the control plane, etcd and workers.
pub fn component_versions(objects: &[Value]) -> Vec<ComponentVersion> {
    let kcp = kind(objects, "KubeadmControlPlane").next();
    let cluster_config = kcp.map(|k| &k["spec"]["kubeadmConfigSpec"]["clusterConfiguration"]);
    let etcdadm = kind(objects, "EtcdadmCluster").next();
    let kubernetes = kcp.and_then(|k| text(&k["spec"]["version"]));
    let etcd = cluster_config
        .and_then(|c| text(&c["etcd"]["local"]["imageTag"]))
        .or_else(|| {
            let spec = &etcdadm?["spec"]["etcdadmConfigSpec"];
            text(&spec["cloudInitConfig"]["version"])
                .or_else(|| image_tag(spec["bottlerocketConfig"]["etcdImage"].as_str()?, "etcd"))
        });
    let coredns = cluster_config.and_then(|c| text(&c["dns"]["imageTag"]));
    let kube_vip = kcp.and_then(|k| {
        k["spec"]["kubeadmConfigSpec"]["files"]
            .as_array()?
            .iter()
            .find_map(|f| image_tag(f["content"].as_str()?, "kube-vip"))
    });
    let template = |field: &dyn Fn(&Value) -> Option<String>| {
        distinct(
            kind(objects, "AWSSnowMachineTemplate")
                .filter_map(|t| field(&t["spec"]["template"]["spec"])),
        )
    };
    let ami = template(&|s| text(&s["ami"]["id"]));
    let os = template(&|s| text(&s["osFamily"]));
    COMPONENTS
        .iter()
        .zip([kubernetes, etcd, coredns, kube_vip, ami, os])
        .map(|(component, version)| ComponentVersion {
            component: (*component).to_owned(),
            version,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_each_component_from_its_object() {
        let objects = [
            json!({"kind": "KubeadmControlPlane", "spec": {"version": "v1.33.1", "kubeadmConfigSpec": {
                "clusterConfiguration": {"dns": {"imageTag": "v1.11.1"}, "etcd": {"local": {"imageTag": "v3.5.21"}}},
                "files": [{"content": "image: public.ecr.aws/x/kube-vip/kube-vip:v0.8.0-eks\n"}]}}}),
            json!({"kind": "AWSSnowMachineTemplate", "spec": {"template": {"spec": {"ami": {"id": "ami-2"}, "osFamily": "ubuntu"}}}}),
            json!({"kind": "AWSSnowMachineTemplate", "spec": {"template": {"spec": {"ami": {"id": "ami-1"}, "osFamily": "ubuntu"}}}}),
        ];
        let got: Vec<(String, Option<String>)> = component_versions(&objects)
            .into_iter()
            .map(|c| (c.component, c.version))
            .collect();
        let want = [
            ("Kubernetes", Some("v1.33.1")),
            ("etcd", Some("v3.5.21")),
            ("CoreDNS", Some("v1.11.1")),
            ("kube-vip", Some("v0.8.0-eks")),
            ("node AMI", Some("ami-1, ami-2")),
            ("node OS", Some("ubuntu")),
        ];
        let want: Vec<(String, Option<String>)> = want
            .iter()
            .map(|(c, v)| ((*c).to_owned(), v.map(str::to_owned)))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn external_etcd_is_read_from_the_etcdadm_cluster() {
        let ubuntu = [
            json!({"kind": "EtcdadmCluster", "spec": {"etcdadmConfigSpec": {"cloudInitConfig": {"version": "3.5.21"}}}}),
        ];
        assert_eq!(
            component_versions(&ubuntu)[1].version.as_deref(),
            Some("3.5.21")
        );
        let bottlerocket = [
            json!({"kind": "EtcdadmCluster", "spec": {"etcdadmConfigSpec": {"bottlerocketConfig": {"etcdImage": "public.ecr.aws/eks-distro/etcd-io/etcd:v3.5.21-eks-1-33-30"}}}}),
        ];
        assert_eq!(
            component_versions(&bottlerocket)[1].version.as_deref(),
            Some("v3.5.21-eks-1-33-30")
        );
        assert_eq!(component_versions(&[])[0].version, None);
    }
}
