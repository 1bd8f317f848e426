//! Rules on SnowMachineConfigs (EKS Anywhere's SnowMachineConfig rules), plus DNI and device checks EKS Anywhere misses.

use super::{
    Findings, same_namespace,
    syntax::{instance_type_vcpus, is_snow_instance_type},
};
use crate::{
    crd::Kind,
    finding::Finding,
    spec::{ClusterSpec, object_id},
    types::snow::{HostOsConfiguration, SnowMachineConfig, Volume},
};
use std::{
    collections::{HashMap, HashSet},
    net::IpAddr,
};

/// The most vCPUs any Snowball Edge device offers to instances (Compute Optimized, 104 vCPU).
pub(crate) const MAX_DEVICE_VCPUS: u32 = 104;

/// Names of the machine configs the Cluster references.
pub(crate) fn referenced_machine_configs(spec: &ClusterSpec) -> HashSet<&str> {
    machine_counts(spec).into_keys().collect()
}

/// Names of the IP pools the machine configs reference.
pub(crate) fn referenced_ip_pools(spec: &ClusterSpec) -> HashSet<&str> {
    spec.machine_configs
        .values()
        .flat_map(|m| m.spec.network.direct_network_interfaces.iter().flatten())
        .filter_map(|dni| dni.ip_pool_ref.as_ref().map(|r| r.name()))
        .collect()
}

/// How many machines each referenced machine config will run, at most.
fn machine_counts(spec: &ClusterSpec) -> HashMap<&str, i64> {
    let s = &spec.cluster.spec;
    let mut uses: Vec<(Option<&str>, i64)> = Vec::new();
    if let Some(cp) = &s.control_plane_configuration {
        uses.push((
            cp.machine_group_ref.as_ref().map(|r| r.name()),
            cp.count.unwrap_or(0),
        ));
    }
    if let Some(etcd) = &s.external_etcd_configuration {
        uses.push((
            etcd.machine_group_ref.as_ref().map(|r| r.name()),
            etcd.count.unwrap_or(0),
        ));
    }
    for g in s.worker_node_group_configurations.iter().flatten() {
        let max = g
            .autoscaling_configuration
            .as_ref()
            .and_then(|a| a.max_count)
            .unwrap_or(0);
        uses.push((
            g.machine_group_ref.as_ref().map(|r| r.name()),
            g.count.unwrap_or(0).max(max),
        ));
    }
    let mut counts: HashMap<&str, i64> = HashMap::new();
    for (name, n) in uses {
        if let Some(name) = name.filter(|n| !n.is_empty()) {
            let entry = counts.entry(name).or_insert(0);
            *entry = entry.saturating_add(n.max(0));
        }
    }
    counts
}

pub(super) fn validate_all(spec: &ClusterSpec) -> Vec<Finding> {
    let counts = machine_counts(spec);
    let etcd = spec
        .cluster
        .spec
        .external_etcd_configuration
        .as_ref()
        .and_then(|e| e.machine_group_ref.as_ref())
        .map(|r| r.name());
    let mut out = Vec::new();
    for (name, machine) in &spec.machine_configs {
        let mut f = Findings::new(object_id(Kind::SnowMachineConfig.as_str(), name));
        validate(spec, machine, &mut f);
        if etcd == Some(name.as_str()) {
            etcd_network(machine, &mut f);
        }
        if let Some(count) = counts.get(name.as_str()) {
            capacity(machine, *count, &mut f);
        }
        out.extend(f.out);
    }
    out
}

fn validate(spec: &ClusterSpec, m: &SnowMachineConfig, f: &mut Findings) {
    let s = &m.spec;
    let instance_type = s.instance_type.as_deref().unwrap_or("");
    if !is_snow_instance_type(instance_type) {
        f.error(
            "machine-config.instance-type",
            "spec.instanceType",
            format!("SnowMachineConfig InstanceType {instance_type} is not supported"),
            "use a Snow type such as sbe-c.large, sbe-c.xlarge, sbe-c.2xlarge or sbe-g.4xlarge",
        );
    }
    let connector = s.physical_network_connector.as_deref().unwrap_or("");
    if !matches!(connector, "SFP_PLUS" | "QSFP" | "RJ45") {
        f.error(
            "machine-config.physical-network-connector",
            "spec.physicalNetworkConnector",
            format!("SnowMachineConfig PhysicalNetworkConnector {connector} is not supported, please use one of the following: SFP_PLUS, QSFP, RJ45"),
            "use SFP_PLUS, QSFP or RJ45",
        );
    }
    devices(s.devices.as_deref().unwrap_or_default(), f);

    let os = s.os_family.as_deref().unwrap_or("");
    match os {
        "" => f.error(
            "machine-config.os-family",
            "spec.osFamily",
            "SnowMachineConfig OSFamily must be specified",
            "write `osFamily: ubuntu` or `osFamily: bottlerocket`",
        ),
        "ubuntu" | "bottlerocket" => {}
        other => f.error(
            "machine-config.os-family",
            "spec.osFamily",
            format!("SnowMachineConfig OSFamily {other} is not supported, please use one of the following: bottlerocket, ubuntu"),
            "use ubuntu or bottlerocket",
        ),
    }
    network(spec, m, f);
    match (&s.containers_volume, os) {
        (None, "bottlerocket") => f.error(
            "machine-config.containers-volume",
            "spec.containersVolume",
            "SnowMachineConfig ContainersVolume must be specified for Bottlerocket OS",
            "add `containersVolume: {size: 25}` (GiB) or larger",
        ),
        (Some(v), "bottlerocket") if v.size < 25 => f.error(
            "machine-config.containers-volume",
            "spec.containersVolume.size",
            "SnowMachineConfig ContainersVolume.Size must be no smaller than 25 Gi for Bottlerocket OS",
            "use a size of at least 25",
        ),
        (Some(v), _) if v.size < 8 => f.error(
            "machine-config.containers-volume",
            "spec.containersVolume.size",
            "SnowMachineConfig ContainersVolume.Size must be no smaller than 8 Gi",
            "use a size of at least 8",
        ),
        _ => {}
    }
    if let Some(host) = &s.host_os_configuration {
        host_os(host, os, f);
    }
    for (i, v) in s.non_root_volumes.iter().flatten().enumerate() {
        non_root_volume(i, v, f);
    }
    same_namespace(spec, m.metadata.namespace.as_deref(), f);
}

fn devices(devices: &[String], f: &mut Findings) {
    if devices.is_empty() {
        f.error(
            "machine-config.devices",
            "spec.devices",
            "SnowMachineConfig Devices must contain at least one device IP",
            "list the IPs of the Snow devices these machines may run on",
        );
        return;
    }
    let mut seen: HashMap<IpAddr, usize> = HashMap::new();
    for (i, device) in devices.iter().enumerate() {
        let field = format!("spec.devices[{i}]");
        if device.trim().is_empty() {
            f.error(
                "machine-config.devices",
                &field,
                "device IP is empty",
                "fill in the IP of a Snow device (the profile name in your credentials file)",
            );
            continue;
        }
        match device.parse::<IpAddr>() {
            Err(_) => f.error(
                "machine-config.devices",
                &field,
                format!("device `{device}` is not an IP address"),
                "list devices by IP address, as in your credentials file",
            ),
            Ok(ip) => {
                if let Some(first) = seen.insert(ip, i) {
                    f.error(
                        "machine-config.devices",
                        &field,
                        format!("device {device} is listed twice (also at devices[{first}])"),
                        "list each device once",
                    );
                }
            }
        }
    }
}

fn network(spec: &ClusterSpec, m: &SnowMachineConfig, f: &mut Findings) {
    let dnis = m
        .spec
        .network
        .direct_network_interfaces
        .as_deref()
        .unwrap_or_default();
    if dnis.is_empty() {
        f.error(
            "machine-config.network",
            "spec.network.directNetworkInterfaces",
            "SnowMachineConfig Network.DirectNetworkInterfaces length must be no smaller than 1",
            "add `network: {directNetworkInterfaces: [{index: 1, dhcp: true, primary: true}]}`",
        );
        return;
    }
    let primaries = dnis.iter().filter(|d| d.primary == Some(true)).count();
    if primaries != 1 {
        f.error(
            "machine-config.network",
            "spec.network.directNetworkInterfaces",
            format!("SnowMachineConfig Network.DirectNetworkInterfaces must contain one and only one primary DNI (found {primaries})"),
            "set `primary: true` on exactly one DNI",
        );
    }
    let mut indexes: HashMap<i64, usize> = HashMap::new();
    for (i, dni) in dnis.iter().enumerate() {
        let field = format!("spec.network.directNetworkInterfaces[{i}]");
        if let Some(index) = dni.index
            && let Some(first) = indexes.insert(index, i)
        {
            f.error(
                "machine-config.dni-index",
                &format!("{field}.index"),
                format!(
                    "DNI index {index} is used twice (also by directNetworkInterfaces[{first}])"
                ),
                "give every DNI its own index from 1 to 8",
            );
        }
        let dhcp = dni.dhcp == Some(true);
        if dni.ip_pool_ref.is_some() && dhcp {
            f.error(
                "machine-config.dni-dhcp-pool",
                &format!("{field}.ipPoolRef"),
                "a DNI cannot take its address from DHCP and from an IP pool",
                "remove `dhcp: true` to use the pool, or remove ipPoolRef to use DHCP",
            );
        }
        match &dni.ip_pool_ref {
            Some(r) if r.kind() != Kind::SnowIPPool.as_str() => f.error(
                "machine-config.dni-pool-ref",
                &format!("{field}.ipPoolRef.kind"),
                format!("ipPoolRef kind `{}` is invalid", r.kind()),
                "write `kind: SnowIPPool`",
            ),
            Some(r) if !spec.ip_pools.contains_key(r.name()) => f.error(
                "machine-config.dni-pool-ref",
                &format!("{field}.ipPoolRef.name"),
                format!("unable to find SnowIPPool {}", r.name()),
                format!("add a SnowIPPool named {} to the file", r.name()),
            ),
            Some(_) => {}
            None if !dhcp => f.warning(
                "machine-config.dni-static",
                &field,
                "DNI has neither dhcp: true nor an ipPoolRef: it gets no address",
                "set `dhcp: true`, or reference a SnowIPPool with ipPoolRef",
            ),
            None => {}
        }
    }
}

/// External etcd machines need static addresses (EKS Anywhere's static Snow config validation).
fn etcd_network(m: &SnowMachineConfig, f: &mut Findings) {
    for (i, dni) in m
        .spec
        .network
        .direct_network_interfaces
        .iter()
        .flatten()
        .enumerate()
    {
        let field = format!("spec.network.directNetworkInterfaces[{i}]");
        if dni.dhcp == Some(true) {
            f.error(
                "etcd.dhcp",
                &format!("{field}.dhcp"),
                "creating unstacked etcd machine with DHCP is not supported for snow. Please use static IP for DNI configuration",
                "set `dhcp: false` and reference a SnowIPPool",
            );
        } else if dni.ip_pool_ref.is_none() {
            f.error(
                "etcd.ip-pool",
                &format!("{field}.ipPoolRef"),
                "snow machine config ip pool must be specified when using static IP",
                "add `ipPoolRef: {kind: SnowIPPool, name: <pool>}`",
            );
        }
    }
}

/// A machine config cannot hold more machines than its devices have vCPUs for.
fn capacity(m: &SnowMachineConfig, machines: i64, f: &mut Findings) {
    let devices = m.spec.devices.as_ref().map_or(0, Vec::len);
    let Some(vcpus) = m
        .spec
        .instance_type
        .as_deref()
        .and_then(instance_type_vcpus)
    else {
        return;
    };
    if devices == 0 || vcpus == 0 {
        return;
    }
    let per_device = i64::from(MAX_DEVICE_VCPUS / vcpus);
    let limit = per_device.saturating_mul(devices as i64);
    if machines > limit {
        f.error(
            "machine-config.capacity",
            "spec.devices",
            format!(
                "{machines} machines of {} on {devices} device(s) cannot fit: a Snowball Edge device offers at most {MAX_DEVICE_VCPUS} vCPUs, so at most {per_device} such machines",
                m.spec.instance_type.as_deref().unwrap_or("")
            ),
            "lower the counts, list more devices, or pick a smaller instance type",
        );
    }
}

fn host_os(host: &HostOsConfiguration, os: &str, f: &mut Findings) {
    let prefix = "SnowMachineConfig HostOSConfiguration is invalid: ";
    let field = "spec.hostOSConfiguration";
    if let Some(ntp) = &host.ntp_configuration {
        if ntp.servers.is_empty() {
            f.error(
                "machine-config.host-os",
                &format!("{field}.ntpConfiguration.servers"),
                format!("{prefix}NTPConfiguration.Servers can not be empty"),
                "list at least one NTP server",
            );
        }
        for (i, server) in ntp.servers.iter().enumerate() {
            let host = server.strip_prefix("udp://").unwrap_or(server);
            let (h, _) = super::syntax::split_host_port(host);
            if h.is_empty()
                || !super::syntax::is_host(h.trim_start_matches('[').trim_end_matches(']'))
            {
                f.error(
                    "machine-config.host-os",
                    &format!("{field}.ntpConfiguration.servers[{i}]"),
                    format!("{prefix}ntp server {server} is invalid"),
                    "use an IP address or host name",
                );
            }
        }
    }
    if let Some(bundles) = &host.cert_bundles {
        if os != "bottlerocket" {
            f.error(
                "machine-config.host-os",
                &format!("{field}.certBundles"),
                format!("{prefix}CertBundles can only be used with osFamily: \"bottlerocket\""),
                "remove certBundles, or use osFamily: bottlerocket",
            );
        }
        for (i, b) in bundles.iter().enumerate() {
            if b.name.trim().is_empty() {
                f.error(
                    "machine-config.host-os",
                    &format!("{field}.certBundles[{i}].name"),
                    format!("{prefix}certBundles name cannot be empty"),
                    "name the bundle",
                );
            }
            if !looks_like_pem_certificates(&b.data) {
                f.error(
                    "machine-config.host-os",
                    &format!("{field}.certBundles[{i}].data"),
                    format!("{prefix}failed to parse certificate bundle {}", b.name),
                    "paste PEM certificates (-----BEGIN CERTIFICATE----- … -----END CERTIFICATE-----)",
                );
            }
        }
    }
    if let Some(br) = &host.bottlerocket_configuration {
        if os != "bottlerocket" {
            f.error(
                "machine-config.host-os",
                &format!("{field}.bottlerocketConfiguration"),
                format!("{prefix}BottlerocketConfiguration can only be used with osFamily: \"bottlerocket\""),
                "remove bottlerocketConfiguration, or use osFamily: bottlerocket",
            );
        }
        let bfield = format!("{field}.bottlerocketConfiguration");
        if let Some(k) = &br.kubernetes {
            for (i, s) in k.allowed_unsafe_sysctls.iter().flatten().enumerate() {
                if s.trim().is_empty() {
                    f.error(
                        "machine-config.host-os",
                        &format!("{bfield}.kubernetes.allowedUnsafeSysctls[{i}]"),
                        format!("{prefix}allowedUnsafeSysctls can not have an empty string"),
                        "remove the empty entry",
                    );
                }
            }
            for (i, ip) in k.cluster_dns_ips.iter().flatten().enumerate() {
                if ip.parse::<IpAddr>().is_err() {
                    f.error(
                        "machine-config.host-os",
                        &format!("{bfield}.kubernetes.clusterDNSIPs[{i}]"),
                        format!("{prefix}IP address [{ip}] in clusterDNSIPs is not a valid IP"),
                        "use IP addresses",
                    );
                }
            }
            if k.max_pods.is_some_and(|n| n < 0) {
                f.error(
                    "machine-config.host-os",
                    &format!("{bfield}.kubernetes.maxPods"),
                    format!("{prefix}MaxPods can not be negative"),
                    "use 0 or more",
                );
            }
        }
        for key in br
            .kernel
            .iter()
            .flat_map(|k| k.sysctl_settings.iter().flatten())
            .map(|(k, _)| k)
        {
            if key.trim().is_empty() {
                f.error(
                    "machine-config.host-os",
                    &format!("{bfield}.kernel.sysctlSettings"),
                    format!("{prefix}sysctlSettings key cannot be empty"),
                    "remove the empty key",
                );
            }
        }
        for key in br
            .boot
            .iter()
            .flat_map(|b| b.boot_kernel_parameters.iter().flatten())
            .map(|(k, _)| k)
        {
            if key.trim().is_empty() {
                f.error(
                    "machine-config.host-os",
                    &format!("{bfield}.boot.bootKernelParameters"),
                    format!("{prefix}bootKernelParameters key cannot be empty"),
                    "remove the empty key",
                );
            }
        }
    }
}

fn non_root_volume(i: usize, v: &Volume, f: &mut Findings) {
    let field = format!("spec.nonRootVolumes[{i}]");
    match v.device_name.as_deref() {
        None | Some("") => f.error(
            "machine-config.non-root-volume",
            &format!("{field}.deviceName"),
            format!("SnowMachineConfig NonRootVolumes[{i}].DeviceName must be specified"),
            "name the device, e.g. /dev/sdc",
        ),
        Some(d) if d.starts_with("/dev/sda") => f.error(
            "machine-config.non-root-volume",
            &format!("{field}.deviceName"),
            format!("SnowMachineConfig NonRootVolumes[{i}].DeviceName is invalid. Device name with prefix /dev/sda* is reserved for root volume and containers volume, please specify other device names"),
            "use /dev/sdc or later",
        ),
        Some(_) => {}
    }
    if v.size < 8 {
        f.error(
            "machine-config.non-root-volume",
            &format!("{field}.size"),
            format!("SnowMachineConfig NonRootVolumes[{i}].Size must be no smaller than 8 Gi"),
            "use a size of at least 8",
        );
    }
}

/// PEM armour around base64 that decodes to DER (a SEQUENCE): enough to catch pasted junk
/// without an X.509 parser in this crate.
fn looks_like_pem_certificates(data: &str) -> bool {
    const BEGIN: &str = "-----BEGIN CERTIFICATE-----";
    const END: &str = "-----END CERTIFICATE-----";
    let mut rest = data;
    let mut found = false;
    while let Some(start) = rest.find(BEGIN) {
        let after = &rest[start + BEGIN.len()..];
        let Some(end) = after.find(END) else {
            return false;
        };
        let body: String = after[..end]
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        if !is_der_sequence_base64(&body) {
            return false;
        }
        found = true;
        rest = &after[end + END.len()..];
    }
    found
}

fn is_der_sequence_base64(body: &str) -> bool {
    // The first base64 quantum of a DER SEQUENCE (0x30) starts with 'M'.
    body.len().is_multiple_of(4)
        && body.starts_with('M')
        && body
            .trim_end_matches('=')
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
}
