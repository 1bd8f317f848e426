//! `ClusterSpec`: one Snow cluster read from a multi-document YAML file, its documents resolved by
//! reference. It is the only way other crates receive a spec.

use crate::{
    crd::Kind,
    finding::{Finding, Location},
    types::{
        API_VERSION,
        cluster::Cluster,
        flux::FluxConfig,
        identity::{AWSIamConfig, OIDCConfig},
        snow::{SnowDatacenterConfig, SnowIPPool, SnowMachineConfig},
    },
    typing::{Positions, Typer},
    yaml::{Budget, Document, Node, NodeKind, YamlError, parse_stream},
};
use serde::de::DeserializeOwned;
use std::collections::{BTreeMap, HashMap, HashSet};

/// EKS Anywhere kinds that may sit in a cluster file but that snowctl does not handle.
/// The check of a file with no Cluster object.
pub const MISSING_CLUSTER_CHECK: &str = "document.missing-cluster";

const OTHER_EKSA_KINDS: &[&str] = &[crate::gitops::LEGACY_KIND];

/// The namespace of an object that names none.
pub const DEFAULT_NAMESPACE: &str = "default";

/// The input could not be read as YAML at all. Everything else is a [`Finding`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InputError {
    /// The bytes are not text.
    #[error("the input is not text (it contains NUL bytes or is not UTF-8 at byte {offset})")]
    NotText {
        /// Where the first offending byte is.
        offset: usize,
    },
    /// The YAML is broken, or exceeds the reading budget.
    #[error(transparent)]
    Yaml(#[from] YamlError),
}

impl InputError {
    /// The error as a finding about `source` (check `input.not-text`, `yaml.syntax` or
    /// `yaml.budget`), with its position and hint.
    pub fn to_finding(&self, source: &str) -> Finding {
        let check = match self {
            InputError::NotText { .. } => "input.not-text",
            InputError::Yaml(YamlError::Syntax { .. }) => "yaml.syntax",
            InputError::Yaml(_) => "yaml.budget",
        };
        let finding = Finding::error(check, self.to_string())
            .object(source)
            .hint(self.hint());
        match self.location() {
            Some(at) => finding.at(at),
            None => finding,
        }
    }

    /// Where the error is, when it has a position.
    pub fn location(&self) -> Option<Location> {
        match self {
            InputError::NotText { .. } => None,
            InputError::Yaml(err) => err.location(),
        }
    }

    /// What the user should do about it.
    pub fn hint(&self) -> &'static str {
        match self {
            InputError::NotText { .. } => "pass the cluster spec YAML file (UTF-8 text)",
            InputError::Yaml(YamlError::Syntax { .. }) => {
                "fix the YAML syntax at that position (indentation, an unclosed bracket or quote)"
            }
            InputError::Yaml(_) => "this is far larger than any cluster spec; check the file",
        }
    }
}

/// Where an object's fields are in the source, and which fields could not be typed.
#[derive(Debug, Clone)]
struct Source {
    positions: Positions,
    broken: HashSet<String>,
    at: Location,
}

/// One Snow cluster: its Cluster, datacenter, machine configs, IP pools and identity providers.
///
/// Built only by [`ClusterSpec::parse`]; defaults are a separate step ([`ClusterSpec::apply_defaults`])
/// and so is static validation ([`ClusterSpec::validate`]).
#[derive(Debug, Clone)]
pub struct ClusterSpec {
    /// The Cluster.
    pub cluster: Cluster,
    /// The SnowDatacenterConfig the Cluster references, when the file has it.
    pub datacenter: Option<SnowDatacenterConfig>,
    /// Every SnowMachineConfig in the file, by name.
    pub machine_configs: BTreeMap<String, SnowMachineConfig>,
    /// Every SnowIPPool in the file, by name.
    pub ip_pools: BTreeMap<String, SnowIPPool>,
    /// Every OIDCConfig in the file, by name.
    pub oidc_configs: BTreeMap<String, OIDCConfig>,
    /// Every AWSIamConfig in the file, by name.
    pub aws_iam_configs: BTreeMap<String, AWSIamConfig>,
    /// Every FluxConfig in the file, by name.
    pub flux_configs: BTreeMap<String, FluxConfig>,
    sources: HashMap<String, Source>,
}

/// The result of reading a spec: the spec (absent when the file holds no usable Cluster) and the
/// findings from reading it.
#[derive(Debug, Clone)]
pub struct Parsed {
    /// The spec, when there is a Cluster.
    pub spec: Option<ClusterSpec>,
    /// Findings from reading: syntax-level (unknown fields, wrong types) and document-level
    /// (missing, duplicate, foreign documents).
    pub findings: Vec<Finding>,
}

/// A document typed as one of the four kinds.
enum Typed {
    Cluster(Box<Cluster>),
    Datacenter(SnowDatacenterConfig),
    Machine(Box<SnowMachineConfig>),
    Pool(SnowIPPool),
    Oidc(OIDCConfig),
    AwsIam(AWSIamConfig),
    Flux(FluxConfig),
}

/// `Kind/name`, the object identity used in findings.
pub fn object_id(kind: &str, name: &str) -> String {
    format!("{kind}/{name}")
}

/// Checks that bytes are text; strips a UTF-8 byte-order mark.
pub fn decode(bytes: &[u8]) -> Result<&str, InputError> {
    if let Some(offset) = bytes.iter().position(|b| *b == 0) {
        return Err(InputError::NotText { offset });
    }
    let text = std::str::from_utf8(bytes).map_err(|e| InputError::NotText {
        offset: e.valid_up_to(),
    })?;
    Ok(text.strip_prefix('\u{feff}').unwrap_or(text))
}

impl ClusterSpec {
    /// Reads a multi-document cluster spec.
    pub fn parse(text: &str) -> Result<Parsed, InputError> {
        Self::parse_with_budget(text, Budget::default())
    }

    /// Reads a multi-document cluster spec within the given reading budget.
    pub fn parse_with_budget(text: &str, budget: Budget) -> Result<Parsed, InputError> {
        let documents = parse_stream(text, budget)?;
        let mut findings = Vec::new();
        let mut sources: HashMap<String, Source> = HashMap::new();
        let mut clusters = Vec::new();
        let mut datacenters: BTreeMap<String, SnowDatacenterConfig> = BTreeMap::new();
        let mut machine_configs = BTreeMap::new();
        let mut ip_pools = BTreeMap::new();
        let mut oidc_configs = BTreeMap::new();
        let mut aws_iam_configs = BTreeMap::new();
        let mut flux_configs = BTreeMap::new();

        for document in &documents {
            let Some((id, typed, source)) = read_document(document, &mut findings) else {
                continue;
            };
            if sources.contains_key(&id) {
                let first = sources.get(&id).map(|s| s.at.line).unwrap_or(0);
                findings.push(
                    Finding::error(
                        "document.duplicate",
                        format!("{id} is defined twice (first at line {first})"),
                    )
                    .object(&id)
                    .at(source.at)
                    .hint("remove one of them, or give it another name"),
                );
                continue;
            }
            sources.insert(id.clone(), source);
            match typed {
                Typed::Cluster(c) => clusters.push((id, *c)),
                Typed::Datacenter(d) => {
                    datacenters.insert(d.metadata.name.clone().unwrap_or_default(), d);
                }
                Typed::Machine(m) => {
                    machine_configs.insert(m.metadata.name.clone().unwrap_or_default(), *m);
                }
                Typed::Pool(p) => {
                    ip_pools.insert(p.metadata.name.clone().unwrap_or_default(), p);
                }
                Typed::Oidc(o) => {
                    oidc_configs.insert(o.metadata.name.clone().unwrap_or_default(), o);
                }
                Typed::AwsIam(a) => {
                    aws_iam_configs.insert(a.metadata.name.clone().unwrap_or_default(), a);
                }
                Typed::Flux(x) => {
                    flux_configs.insert(x.metadata.name.clone().unwrap_or_default(), x);
                }
            }
        }

        let mut clusters = clusters.into_iter();
        let Some((_, cluster)) = clusters.next() else {
            findings.push(
                Finding::error(
                    MISSING_CLUSTER_CHECK,
                    if documents.iter().all(|d| d.root.is_none()) {
                        "the file is empty: it has no Cluster object".to_owned()
                    } else {
                        "no Cluster object (kind: Cluster, apiVersion: anywhere.eks.amazonaws.com/v1alpha1)".to_owned()
                    },
                )
                .hint("start from a generated cluster spec (`template::cluster_config`)"),
            );
            return Ok(Parsed {
                spec: None,
                findings,
            });
        };
        for (id, _) in clusters {
            let at = sources.get(&id).map(|s| s.at);
            let mut finding = Finding::error(
                "document.multiple-clusters",
                format!("{id}: a spec file holds one Cluster; this one is ignored"),
            )
            .object(&id)
            .hint("put each cluster in a file of its own");
            if let Some(at) = at {
                finding = finding.at(at);
            }
            findings.push(finding);
        }

        let dc_name = cluster
            .spec
            .datacenter_ref
            .as_ref()
            .filter(|r| r.kind() == Kind::SnowDatacenterConfig.as_str())
            .map(|r| r.name().to_owned());
        let datacenter = dc_name.as_ref().and_then(|name| datacenters.remove(name));
        for name in datacenters.keys() {
            let id = object_id(Kind::SnowDatacenterConfig.as_str(), name);
            let mut f = Finding::warning(
                "document.unreferenced",
                format!("{id} is not referenced by the Cluster and is ignored"),
            )
            .object(&id)
            .hint("remove it, or point spec.datacenterRef at it");
            if let Some(at) = sources.get(&id).map(|s| s.at) {
                f = f.at(at);
            }
            findings.push(f);
        }

        let spec = ClusterSpec {
            cluster,
            datacenter,
            machine_configs,
            ip_pools,
            oidc_configs,
            aws_iam_configs,
            flux_configs,
            sources,
        };
        Ok(Parsed {
            spec: Some(spec),
            findings,
        })
    }

    /// The Cluster's name.
    pub fn name(&self) -> &str {
        self.cluster.metadata.name.as_deref().unwrap_or("")
    }

    /// The Cluster's namespace (`default` when unset).
    pub fn namespace(&self) -> &str {
        self.cluster
            .metadata
            .namespace
            .as_deref()
            .unwrap_or(DEFAULT_NAMESPACE)
    }

    /// Fills the line and column of findings that point at an object and field of this spec,
    /// and drops findings about fields whose value was already reported as mistyped.
    pub fn locate(&self, findings: Vec<Finding>) -> Vec<Finding> {
        // One index per object, built on first use: a spec with thousands of findings stays linear.
        let mut indexes: HashMap<&str, crate::typing::PositionIndex<'_>> = HashMap::new();
        findings
            .into_iter()
            .filter(|f| !self.is_broken(f))
            .map(|mut f| {
                if f.line.is_none()
                    && let Some((object, source)) = f
                        .object
                        .as_ref()
                        .and_then(|o| self.sources.get_key_value(o))
                {
                    let index = indexes
                        .entry(object.as_str())
                        .or_insert_with(|| source.positions.index());
                    let at = f
                        .field
                        .as_deref()
                        .and_then(|p| index.locate(p))
                        .unwrap_or(source.at);
                    f = f.at(at);
                }
                f
            })
            .collect()
    }

    fn is_broken(&self, finding: &Finding) -> bool {
        let (Some(object), Some(field)) = (&finding.object, &finding.field) else {
            return false;
        };
        !finding.check.starts_with("schema.") && self.is_broken_field(object, field)
    }

    /// Whether `field` of `object` (or a parent of it) held a value that could not be typed.
    pub(crate) fn is_broken_field(&self, object: &str, field: &str) -> bool {
        let Some(source) = self.sources.get(object) else {
            return false;
        };
        source.broken.iter().any(|b| {
            field == b
                || field
                    .strip_prefix(b.as_str())
                    .is_some_and(|rest| rest.starts_with(['.', '[']))
        })
    }

    /// Where an object starts in the source.
    pub fn object_location(&self, object: &str) -> Option<Location> {
        self.sources.get(object).map(|s| s.at)
    }
}

/// Types one document; `None` (with findings) when it is not one of our objects.
fn read_document(
    document: &Document,
    findings: &mut Vec<Finding>,
) -> Option<(String, Typed, Source)> {
    let root = document.root.as_ref()?;
    let doc_label = format!("document {} (line {})", document.index + 1, root.at.line);
    if !matches!(root.kind, NodeKind::Map(_)) {
        findings.push(
            Finding::error(
                "document.not-an-object",
                format!(
                    "{doc_label} is {}, not a Kubernetes object",
                    root.describe()
                ),
            )
            .at(root.at)
            .hint("each document must be a mapping with apiVersion, kind, metadata and spec"),
        );
        return None;
    }
    let scalar = |key: &str| {
        root.get(key)
            .and_then(Node::as_str)
            .filter(|s| !s.is_empty())
    };
    let Some(kind_name) = scalar("kind") else {
        findings.push(
            Finding::error("document.kind", format!("{doc_label} has no kind"))
                .at(root.at)
                .field("kind")
                .hint("add `kind: Cluster`, `SnowDatacenterConfig`, `SnowMachineConfig` or `SnowIPPool`"),
        );
        return None;
    };
    let api_version = scalar("apiVersion").unwrap_or("");
    let name = root
        .get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(Node::as_str)
        .unwrap_or("");
    let id = if name.is_empty() {
        format!("{kind_name} ({doc_label})")
    } else {
        object_id(kind_name, name)
    };
    let at = root.at;
    let Some(kind) = Kind::from_name(kind_name) else {
        if api_version == API_VERSION && OTHER_EKSA_KINDS.contains(&kind_name) {
            findings.push(
                Finding::warning(
                    "document.unsupported-kind",
                    format!("{kind_name} is not handled by snowctl and is ignored"),
                )
                .object(&id)
                .at(at)
                .hint("GitOpsConfig is EKS Anywhere's legacy GitHub-only kind: write a FluxConfig with the same owner, repository, branch, clusterConfigPath and fluxSystemNamespace (as systemNamespace) under spec.github"),
            );
        } else {
            findings.push(
                Finding::error("document.foreign", format!("{doc_label}: `{api_version}` `{kind_name}` is not part of a Snow cluster spec"))
                    .object(&id)
                    .field("kind")
                    .at(root.get("kind").map_or(at, |k| k.at))
                    .hint("a Snow cluster spec holds Cluster, SnowDatacenterConfig, SnowMachineConfig and SnowIPPool objects of anywhere.eks.amazonaws.com/v1alpha1"),
            );
        }
        return None;
    };
    if api_version != API_VERSION {
        findings.push(
            Finding::error(
                "document.api-version",
                if api_version.is_empty() {
                    format!("{kind_name} has no apiVersion")
                } else {
                    format!("{kind_name} has apiVersion `{api_version}`")
                },
            )
            .object(&id)
            .field("apiVersion")
            .at(root.get("apiVersion").map_or(at, |n| n.at))
            .hint(format!("write `apiVersion: {API_VERSION}`")),
        );
        return None;
    }
    let mut typer = Typer::new(&id);
    let value = typer.value(root, kind.schema(), "");
    if name.is_empty() {
        typer.findings.push(
            Finding::error("metadata.name", format!("{kind_name} has no metadata.name"))
                .object(&id)
                .field("metadata.name")
                .at(at)
                .hint("give every object a name: the Cluster references the others by name"),
        );
    }
    let Typer {
        findings: typing_findings,
        positions,
        broken,
        ..
    } = typer;
    findings.extend(typing_findings);
    let value = value?;
    let typed = match kind {
        Kind::Cluster => from_value(value, &id, findings).map(|c| Typed::Cluster(Box::new(c))),
        Kind::SnowDatacenterConfig => from_value(value, &id, findings).map(Typed::Datacenter),
        Kind::SnowMachineConfig => {
            from_value(value, &id, findings).map(|m| Typed::Machine(Box::new(m)))
        }
        Kind::SnowIPPool => from_value(value, &id, findings).map(Typed::Pool),
        Kind::OIDCConfig => from_value(value, &id, findings).map(Typed::Oidc),
        Kind::AWSIamConfig => from_value(value, &id, findings).map(Typed::AwsIam),
        Kind::FluxConfig => from_value(value, &id, findings).map(Typed::Flux),
    }?;
    if name.is_empty() {
        return None;
    }
    Some((
        id,
        typed,
        Source {
            positions,
            broken,
            at,
        },
    ))
}

fn from_value<T: DeserializeOwned>(
    value: serde_json::Value,
    id: &str,
    findings: &mut Vec<Finding>,
) -> Option<T> {
    match serde_json::from_value(value) {
        Ok(v) => Some(v),
        Err(err) => {
            findings.push(
                Finding::error("schema.type", format!("{id} could not be read: {err}")).object(id),
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = "\
apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: Cluster
metadata:
  name: demo
spec:
  kubernetesVersion: 1.30
  datacenterRef: {kind: SnowDatacenterConfig, name: demo}
---
apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: SnowDatacenterConfig
metadata:
  name: demo
spec: {}
";

    #[test]
    fn resolves_documents_and_reads_versions_as_strings() {
        let parsed = ClusterSpec::parse(MINIMAL).unwrap();
        assert!(parsed.findings.is_empty(), "{:?}", parsed.findings);
        let spec = parsed.spec.unwrap();
        assert_eq!(
            spec.cluster.spec.kubernetes_version.as_deref(),
            Some("1.30")
        );
        assert!(spec.datacenter.is_some());
        assert_eq!(spec.name(), "demo");
        assert_eq!(spec.namespace(), "default");
    }

    #[test]
    fn document_level_problems_are_findings() {
        let text = format!(
            "{MINIMAL}---\n- a list\n---\nplain scalar\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: x}}\n---\n{MINIMAL}"
        );
        let parsed = ClusterSpec::parse(&text).unwrap();
        let checks: Vec<&str> = parsed.findings.iter().map(|f| f.check.as_str()).collect();
        assert_eq!(
            checks,
            [
                "document.not-an-object",
                "document.not-an-object",
                "document.foreign",
                "document.duplicate",
                "document.duplicate"
            ]
        );
        assert!(parsed.spec.is_some());
    }

    #[test]
    fn empty_and_clusterless_files() {
        let parsed = ClusterSpec::parse("").unwrap();
        assert!(parsed.spec.is_none());
        assert_eq!(parsed.findings[0].check, "document.missing-cluster");
        let parsed = ClusterSpec::parse("# only a comment\n").unwrap();
        assert_eq!(parsed.findings[0].check, "document.missing-cluster");
    }

    #[test]
    fn binary_is_an_input_error() {
        assert!(matches!(
            decode(b"\x7fELF\x00\x01"),
            Err(InputError::NotText { offset: 4 })
        ));
        assert!(matches!(
            decode(&[0xff, 0xfe, b'a']),
            Err(InputError::NotText { offset: 0 })
        ));
        assert_eq!(decode("\u{feff}a: b".as_bytes()).unwrap(), "a: b");
    }
}
