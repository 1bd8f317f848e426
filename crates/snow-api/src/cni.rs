//! The CNI of a cluster, typed: `spec.clusterNetwork.cniConfig.cilium` read into values that can
//! only hold what EKS Anywhere accepts. Static validation reports the problems of the same reading
//! (`validate`), and [`ValidSpec::cilium`] returns it for a checked spec.
//!
//! EKS Anywhere's rules (its Cluster webhook): `policyEnforcementMode` is `default`, `always` or
//! `never`; with `skipUpgrade: true` no `policyEnforcementMode`; `routingMode: direct` needs
//! `ipv4NativeRoutingCIDR`; `helmValues` is the whole Helm values map and is not checked. snowctl
//! also refuses what EKS Anywhere silently ignores: a `routingMode` other than `overlay`/`direct`
//! (EKS Anywhere treats it as `overlay`), a native-routing CIDR that is not a CIDR of its family,
//! and `helmValues` that is not a mapping (EKS Anywhere then falls back to its own values); and it
//! warns about fields that have no effect.

use crate::{ValidSpec, types::cluster::CiliumConfig};
use ipnet::{Ipv4Net, Ipv6Net};
use serde_json::{Map, Value};

/// Where the Cilium settings are in a Cluster.
pub const CILIUM_FIELD: &str = "spec.clusterNetwork.cniConfig.cilium";

/// Cilium's policy enforcement mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PolicyEnforcementMode {
    /// `default`: policies apply to endpoints that some policy selects.
    Default,
    /// `always`: every endpoint is enforced (EKS Anywhere then adds allow-all policies for its
    /// own namespaces).
    Always,
    /// `never`: no enforcement.
    Never,
}

impl PolicyEnforcementMode {
    /// The value as written in the spec and in Cilium's Helm values.
    pub fn as_str(self) -> &'static str {
        match self {
            PolicyEnforcementMode::Default => "default",
            PolicyEnforcementMode::Always => "always",
            PolicyEnforcementMode::Never => "never",
        }
    }

    fn parse(text: &str) -> Option<PolicyEnforcementMode> {
        match text {
            "default" => Some(PolicyEnforcementMode::Default),
            "always" => Some(PolicyEnforcementMode::Always),
            "never" => Some(PolicyEnforcementMode::Never),
            _ => None,
        }
    }
}

/// How pod traffic crosses nodes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Routing {
    /// `overlay` (the default): a Geneve tunnel.
    #[default]
    Overlay,
    /// `direct`: no tunnel; the nodes route pod CIDRs natively.
    Direct {
        /// `ipv4NativeRoutingCIDR`: traffic to it is not masqueraded.
        ipv4: Ipv4Net,
        /// `ipv6NativeRoutingCIDR`.
        ipv6: Option<Ipv6Net>,
    },
}

/// The checked Cilium settings of a cluster.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Cilium {
    /// `policyEnforcementMode`, when set.
    pub policy_enforcement_mode: Option<PolicyEnforcementMode>,
    /// `egressMasqueradeInterfaces`, when set and not empty.
    pub egress_masquerade_interfaces: Option<String>,
    /// `skipUpgrade: true`: snowctl installs Cilium once and then leaves it to the operator.
    pub skip_upgrade: bool,
    /// `routingMode` with its CIDRs.
    pub routing: Routing,
    /// `cniExclusive`, when set.
    pub cni_exclusive: Option<bool>,
    /// `helmValues`: when set, the entire Helm values map (the fields above, but `skipUpgrade`,
    /// are then ignored, as EKS Anywhere ignores them).
    pub helm_values: Option<Map<String, Value>>,
}

impl Cilium {
    /// Whether snowctl manages Cilium past its first install (EKS Anywhere's `IsManaged`).
    pub fn is_managed(&self) -> bool {
        !self.skip_upgrade
    }
}

/// How bad a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Level {
    Error,
    Warning,
}

/// One problem of the reading: the field below [`CILIUM_FIELD`], what is wrong, what to do.
#[derive(Debug, Clone)]
pub(crate) struct Problem {
    pub level: Level,
    pub field: &'static str,
    pub message: String,
    pub hint: &'static str,
}

/// Reads the settings; every problem is returned, and the value holds what could be read (the
/// defaults where a field is wrong).
pub(crate) fn read(cfg: &CiliumConfig) -> (Cilium, Vec<Problem>) {
    let mut problems = Vec::new();
    let mut problem = |level, field, message: String, hint| {
        problems.push(Problem {
            level,
            field,
            message,
            hint,
        })
    };
    let mode = cfg
        .policy_enforcement_mode
        .as_deref()
        .filter(|m| !m.is_empty());
    let policy_enforcement_mode = mode.and_then(|m| {
        let parsed = PolicyEnforcementMode::parse(m);
        if parsed.is_none() {
            problem(
                Level::Error,
                "policyEnforcementMode",
                format!("cilium policyEnforcementMode \"{m}\" not supported"),
                "use default, always or never",
            );
        }
        parsed
    });
    let skip_upgrade = cfg.skip_upgrade == Some(true);
    if skip_upgrade && mode.is_some() {
        problem(
            Level::Error,
            "policyEnforcementMode",
            "when using skipUpgrade for cilium all other fields must be empty".into(),
            "remove policyEnforcementMode, or set skipUpgrade: false",
        );
    }
    let v4 = cfg
        .ipv4_native_routing_cidr
        .as_deref()
        .filter(|c| !c.is_empty());
    let v6 = cfg
        .ipv6_native_routing_cidr
        .as_deref()
        .filter(|c| !c.is_empty());
    let ipv4 = v4.and_then(|c| {
        let parsed = c.parse::<Ipv4Net>().ok();
        if parsed.is_none() {
            problem(
                Level::Error,
                "ipv4NativeRoutingCIDR",
                format!("ipv4NativeRoutingCIDR `{c}` is not an IPv4 CIDR"),
                "write an IPv4 CIDR such as 10.0.0.0/16",
            );
        }
        parsed
    });
    let ipv6 = v6.and_then(|c| {
        let parsed = c.parse::<Ipv6Net>().ok();
        if parsed.is_none() {
            problem(
                Level::Error,
                "ipv6NativeRoutingCIDR",
                format!("ipv6NativeRoutingCIDR `{c}` is not an IPv6 CIDR"),
                "write an IPv6 CIDR such as fd00::/104",
            );
        }
        parsed
    });
    let routing = match cfg.routing_mode.as_deref().filter(|m| !m.is_empty()) {
        None | Some("overlay") => {
            for (set, field) in [
                (v4.is_some(), "ipv4NativeRoutingCIDR"),
                (v6.is_some(), "ipv6NativeRoutingCIDR"),
            ] {
                if set {
                    problem(
                        Level::Warning,
                        field,
                        format!("{field} has no effect with overlay routing"),
                        "set routingMode: direct, or remove it",
                    );
                }
            }
            Routing::Overlay
        }
        Some("direct") => match ipv4 {
            Some(ipv4) => Routing::Direct { ipv4, ipv6 },
            None => {
                if v4.is_none() {
                    problem(
                        Level::Error,
                        "ipv4NativeRoutingCIDR",
                        "direct routing mode requires ipv4NativeRoutingCIDR to be set".into(),
                        "set ipv4NativeRoutingCIDR to the CIDR the nodes route natively",
                    );
                }
                Routing::Overlay
            }
        },
        Some(other) => {
            problem(
                Level::Error,
                "routingMode",
                format!("cilium routingMode \"{other}\" not supported"),
                "use overlay or direct",
            );
            Routing::Overlay
        }
    };
    let helm_values = match &cfg.helm_values {
        None => None,
        Some(Value::Object(map)) => Some(map.clone()),
        Some(_) => {
            problem(
                Level::Error,
                "helmValues",
                "helmValues is not a mapping".into(),
                "write Cilium's Helm values as a mapping, e.g. `helmValues: {ipam: {mode: kubernetes}}`",
            );
            None
        }
    };
    if cfg.helm_values.is_some() {
        for (set, field) in [
            (mode.is_some(), "policyEnforcementMode"),
            (
                cfg.egress_masquerade_interfaces
                    .as_deref()
                    .is_some_and(|e| !e.is_empty()),
                "egressMasqueradeInterfaces",
            ),
            (
                cfg.routing_mode.as_deref().is_some_and(|m| !m.is_empty()),
                "routingMode",
            ),
            (v4.is_some(), "ipv4NativeRoutingCIDR"),
            (v6.is_some(), "ipv6NativeRoutingCIDR"),
            (cfg.cni_exclusive.is_some(), "cniExclusive"),
        ] {
            if set {
                problem(
                    Level::Warning,
                    field,
                    format!("{field} is ignored because helmValues is set"),
                    "put the setting in helmValues, or remove helmValues",
                );
            }
        }
    }
    let cilium = Cilium {
        policy_enforcement_mode,
        egress_masquerade_interfaces: cfg
            .egress_masquerade_interfaces
            .clone()
            .filter(|e| !e.is_empty()),
        skip_upgrade,
        routing,
        cni_exclusive: cfg.cni_exclusive,
        helm_values,
    };
    (cilium, problems)
}

impl ValidSpec {
    /// The cluster's Cilium settings. Validation guarantees Cilium is the CNI (through
    /// `cniConfig.cilium`, or the deprecated `cni: cilium`, which means `cilium: {}` as in EKS
    /// Anywhere's defaulting) and that the settings read without error.
    pub fn cilium(&self) -> Cilium {
        self.cluster
            .spec
            .cluster_network
            .as_ref()
            .and_then(|n| n.cni_config.as_ref())
            .and_then(|c| c.cilium.as_ref())
            .map(|cfg| read(cfg).0)
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(yaml: &str) -> CiliumConfig {
        serde_saphyr::from_str(yaml).unwrap()
    }

    #[test]
    fn an_empty_config_is_overlay_managed_with_nothing_set() {
        let (c, problems) = read(&cfg("{}"));
        assert!(problems.is_empty());
        assert_eq!(c, Cilium::default());
        assert!(c.is_managed());
    }

    #[test]
    fn direct_routing_reads_both_cidrs() {
        let (c, problems) = read(&cfg(
            "{routingMode: direct, ipv4NativeRoutingCIDR: 10.0.0.0/16, ipv6NativeRoutingCIDR: 'fd00::/104'}",
        ));
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(
            c.routing,
            Routing::Direct {
                ipv4: "10.0.0.0/16".parse().unwrap(),
                ipv6: Some("fd00::/104".parse().unwrap())
            }
        );
    }

    #[test]
    fn every_problem_is_reported_at_once() {
        let (_, problems) = read(&cfg(
            "{policyEnforcementMode: strict, skipUpgrade: true, routingMode: direct, ipv6NativeRoutingCIDR: 10.0.0.0/8}",
        ));
        let fields: Vec<_> = problems.iter().map(|p| (p.level, p.field)).collect();
        assert_eq!(
            fields,
            [
                (Level::Error, "policyEnforcementMode"),
                (Level::Error, "policyEnforcementMode"),
                (Level::Error, "ipv6NativeRoutingCIDR"),
                (Level::Error, "ipv4NativeRoutingCIDR"),
            ]
        );
    }
}
