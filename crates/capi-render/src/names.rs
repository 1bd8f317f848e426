//! Object names, and the `-N` suffix rule for immutable templates (EKS Anywhere's template-name bumping).

use std::collections::BTreeMap;

/// The names of the objects whose names can change on upgrade.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Names {
    /// The control-plane AWSSnowMachineTemplate (`<cluster>-control-plane-N`).
    pub control_plane_template: String,
    /// The EtcdadmCluster (`<cluster>-etcd`, never renamed).
    pub etcd_cluster: String,
    /// The etcd AWSSnowMachineTemplate (`<cluster>-etcd-N`).
    pub etcd_template: String,
    /// Per worker group: the worker AWSSnowMachineTemplate and KubeadmConfigTemplate
    /// (`<cluster>-<group>-N` each).
    pub workers: BTreeMap<String, WorkerTemplateNames>,
}

/// The two template names of one worker group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerTemplateNames {
    /// The AWSSnowMachineTemplate.
    pub machine_template: String,
    /// The KubeadmConfigTemplate.
    pub config_template: String,
}

/// A name does not end in `-N`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid format of name [name={0}]: a template name has to end in -N (e.g. mycluster-md-0-1)"
)]
pub struct InvalidTemplateName(pub String);

/// `base-N` → `base-(N+1)`.
pub fn bump(name: &str) -> Result<String, InvalidTemplateName> {
    let (base, n) = name
        .rsplit_once('-')
        .ok_or_else(|| InvalidTemplateName(name.to_owned()))?;
    let n: u64 = n
        .parse()
        .ok()
        .filter(|_| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        .ok_or_else(|| InvalidTemplateName(name.to_owned()))?;
    Ok(format!("{base}-{}", n.saturating_add(1)))
}

impl Names {
    /// The names of a new cluster: every template at `-1`.
    pub fn initial(cluster: &str, groups: &[String]) -> Names {
        Names {
            control_plane_template: format!("{cluster}-control-plane-1"),
            etcd_cluster: format!("{cluster}-etcd"),
            etcd_template: format!("{cluster}-etcd-1"),
            workers: groups
                .iter()
                .map(|g| {
                    let base = format!("{cluster}-{g}-1");
                    (
                        g.clone(),
                        WorkerTemplateNames {
                            machine_template: base.clone(),
                            config_template: base,
                        },
                    )
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bumps_the_suffix() {
        assert_eq!(bump("test-cp-1").unwrap(), "test-cp-2");
        assert_eq!(bump("snow-test-md-0-9").unwrap(), "snow-test-md-0-10");
        assert!(bump("no-number").is_err());
        assert!(bump("nodash").is_err());
    }
}
