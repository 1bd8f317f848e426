//! Rules on SnowIPPools (EKS Anywhere's SnowIPPool rules), plus overlap, gateway and endpoint checks.

use super::{Findings, same_namespace};
use crate::{
    crd::Kind,
    finding::Finding,
    spec::{ClusterSpec, object_id},
    types::snow::IpPool,
};
use ipnet::IpNet;
use std::net::IpAddr;

/// A pool range that passed its own checks.
struct Range {
    pool: String,
    index: usize,
    start: IpAddr,
    end: IpAddr,
}

pub(super) fn validate_all(spec: &ClusterSpec) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut ranges: Vec<Range> = Vec::new();
    for (name, pool) in &spec.ip_pools {
        let mut f = Findings::new(object_id(Kind::SnowIPPool.as_str(), name));
        let pools = pool.spec.pools.as_deref().unwrap_or_default();
        if pools.is_empty() {
            f.error(
                "ip-pool.empty",
                "spec.pools",
                "SnowIPPool has no pools",
                "add `pools: [{ipStart, ipEnd, subnet, gateway}]`",
            );
        }
        for (i, p) in pools.iter().enumerate() {
            if let Some((start, end)) = validate_pool(i, p, &mut f) {
                ranges.push(Range {
                    pool: name.clone(),
                    index: i,
                    start,
                    end,
                });
            }
        }
        same_namespace(spec, pool.metadata.namespace.as_deref(), &mut f);
        out.extend(f.out);
    }
    out.extend(overlaps(&mut ranges));
    // The control-plane endpoint is kube-vip's address: a node must never be given it.
    let endpoint = spec
        .cluster
        .spec
        .control_plane_configuration
        .as_ref()
        .and_then(|cp| cp.endpoint.as_ref())
        .and_then(|e| e.host.parse::<IpAddr>().ok());
    if let Some(ip) = endpoint {
        for r in ranges.iter().filter(|r| r.start <= ip && ip <= r.end) {
            let mut f = Findings::new(object_id(Kind::SnowIPPool.as_str(), &r.pool));
            f.error(
                "ip-pool.endpoint-in-range",
                &format!("spec.pools[{}]", r.index),
                format!("the control plane endpoint {ip} lies inside this range ({}-{}); a node could be given kube-vip's address", r.start, r.end),
                "move the endpoint out of every node IP pool range, or shrink the range",
            );
            out.extend(f.out);
        }
    }
    out
}

/// One finding per range that overlaps a range before it (by start address, then source order),
/// naming the earlier range that reaches furthest. Sort and sweep: `n log n` for `n` ranges, so
/// a thousand identical pools cost a thousand findings, not half a million pairs. Sorts `ranges`.
fn overlaps(ranges: &mut [Range]) -> Vec<Finding> {
    // A stable sort keeps source order among equal starts. IPv4 sorts before IPv6, and a range
    // never mixes the two, so ranges of different versions never meet in the sweep.
    ranges.sort_by_key(|r| r.start);
    let mut out = Vec::new();
    let mut reach: Option<&Range> = None;
    for range in ranges.iter() {
        match reach {
            Some(other) if range.start <= other.end => {
                let mut f = Findings::new(object_id(Kind::SnowIPPool.as_str(), &range.pool));
                f.error(
                    "ip-pool.overlap",
                    &format!("spec.pools[{}]", range.index),
                    format!(
                        "range {}-{} overlaps SnowIPPool {} pools[{}] ({}-{})",
                        range.start, range.end, other.pool, other.index, other.start, other.end
                    ),
                    "make the ranges disjoint: two nodes would get the same address",
                );
                out.extend(f.out);
                if range.end > other.end {
                    reach = Some(range);
                }
            }
            _ => reach = Some(range),
        }
    }
    out
}

/// Per-pool rules in EKS Anywhere's order; returns the range when it is usable.
fn validate_pool(i: usize, p: &IpPool, f: &mut Findings) -> Option<(IpAddr, IpAddr)> {
    let field = format!("spec.pools[{i}]");
    let mut ip = |value: &str, name: &str, label: &str| -> Option<IpAddr> {
        if value.is_empty() {
            f.error(
                "ip-pool.address",
                &format!("{field}.{name}"),
                format!("SnowIPPool Pools[{i}].{label} can not be empty"),
                "write an IP address",
            );
            return None;
        }
        match value.parse::<IpAddr>() {
            Ok(ip) => Some(ip),
            Err(_) => {
                f.error(
                    "ip-pool.address",
                    &format!("{field}.{name}"),
                    format!("SnowIPPool Pools[{i}].{label} {value} is invalid"),
                    "write an IP address",
                );
                None
            }
        }
    };
    let start = ip(&p.ip_start, "ipStart", "IPStart");
    let end = ip(&p.ip_end, "ipEnd", "IPEnd");
    let gateway = ip(&p.gateway, "gateway", "Gateway");
    let mut usable = start.zip(end);
    if let Some((s, e)) = usable {
        if s.is_ipv4() != e.is_ipv4() {
            f.error(
                "ip-pool.range",
                &format!("{field}.ipEnd"),
                "IPStart and IPEnd are of different IP versions",
                "use two IPv4 or two IPv6 addresses",
            );
            usable = None;
        } else if s >= e {
            f.error(
                "ip-pool.range",
                &format!("{field}.ipStart"),
                format!("SnowIPPool Pools[{i}].IPStart should be smaller than IPEnd"),
                "swap ipStart and ipEnd, or widen the range",
            );
            usable = None;
        }
    }
    let subnet = if p.subnet.is_empty() {
        f.error(
            "ip-pool.subnet",
            &format!("{field}.subnet"),
            format!("SnowIPPool Pools[{i}].Subnet can not be empty"),
            "write the subnet as a CIDR, e.g. 10.0.0.0/24",
        );
        None
    } else {
        match p.subnet.parse::<IpNet>() {
            Ok(net) => Some(net),
            Err(err) => {
                f.error(
                    "ip-pool.subnet",
                    &format!("{field}.subnet"),
                    format!("SnowIPPool Pools[{i}].Subnet is invalid: {err}"),
                    "write the subnet as a CIDR, e.g. 10.0.0.0/24",
                );
                None
            }
        }
    };
    if let Some(net) = subnet {
        for (addr, name, label) in [(start, "ipStart", "IPStart"), (end, "ipEnd", "IPEnd")] {
            if let Some(addr) = addr.filter(|a| !net.contains(a)) {
                f.error(
                    "ip-pool.subnet",
                    &format!("{field}.{name}"),
                    format!(
                        "SnowIPPool Pools[{i}].{label} {addr} should be within the subnet range {}",
                        p.subnet
                    ),
                    "fix the address or the subnet",
                );
                usable = None;
            }
        }
        if let Some(gw) = gateway.filter(|g| !net.contains(g)) {
            f.error(
                "ip-pool.gateway",
                &format!("{field}.gateway"),
                format!("gateway {gw} is outside the subnet {}", p.subnet),
                "the gateway must be an address of the subnet",
            );
        }
        if let (Some(gw), Some((s, e))) = (gateway, usable)
            && s <= gw
            && gw <= e
        {
            // EKS Anywhere accepts this; a node would be handed the gateway's address.
            f.warning(
                "ip-pool.gateway",
                &format!("{field}.gateway"),
                format!("gateway {gw} lies inside the range {s}-{e}"),
                "exclude the gateway from the node range",
            );
        }
    }
    usable
}
