//! The preflight runner: every call to every device at once, then every check as a pure
//! function of the answers. A failing device never stops the others, and a failing call never
//! stops the other checks of its device.

use crate::device::{
    Device, DeviceDescription, DeviceSoftware, Image, InstanceTypeInfo, UnlockState,
};
use crate::error::{DeviceError, Service};
use crate::plan::{MachinePlan, Plan};
use futures_util::stream::{FuturesUnordered, StreamExt};
use snow_api::{DeviceIp, Finding, Severity};
use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

/// The minimum Snow software version EKS Anywhere supports.
pub const MIN_SOFTWARE_VERSION: u32 = 102;
/// The minimum default vCPU of an instance type.
pub const MIN_DEFAULT_VCPUS: u32 = 2;

/// Create runs the endpoint-in-use probe; upgrade does not (as in EKS Anywhere).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// A new cluster.
    #[default]
    Create,
    /// An existing cluster.
    Upgrade,
}

/// How calls are scheduled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Schedule {
    /// Every call to every device at once (snowctl).
    #[default]
    Concurrent,
    /// Device by device, call by call, as EKS Anywhere does (kept for comparison: the benchmark
    /// measures both).
    Sequential,
}

/// Knobs of a preflight run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreflightOptions {
    /// Create or upgrade.
    pub mode: Mode,
    /// `--skip-ip-check`: no endpoint-in-use probe.
    pub skip_ip_check: bool,
    /// The port the endpoint probe dials (80, as in EKS Anywhere).
    pub endpoint_probe_port: u16,
    /// How long the endpoint probe waits (500 ms, as in EKS Anywhere).
    pub endpoint_probe_timeout: Duration,
    /// The instance metadata service (`169.254.169.254:80`); `None` skips the admin-IP check.
    pub imds: Option<SocketAddr>,
    /// How long to wait for IMDS.
    pub imds_timeout: Duration,
    /// Scheduling.
    pub schedule: Schedule,
}

impl Default for PreflightOptions {
    fn default() -> Self {
        PreflightOptions {
            mode: Mode::Create,
            skip_ip_check: false,
            endpoint_probe_port: 80,
            endpoint_probe_timeout: Duration::from_millis(500),
            imds: Some(SocketAddr::from(([169, 254, 169, 254], 80))),
            imds_timeout: Duration::from_secs(1),
            schedule: Schedule::Concurrent,
        }
    }
}

/// One device finished: for progress lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceProgress {
    /// The device.
    pub device: DeviceIp,
    /// Calls made.
    pub calls: usize,
    /// Calls that failed.
    pub failed: usize,
    /// Since the run started.
    pub elapsed: Duration,
}

/// The result of a preflight run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreflightReport {
    /// Every finding, each tagged with its device when it has one; device findings come in
    /// device order, then check order.
    pub findings: Vec<Finding>,
    /// The devices checked, in plan order.
    pub devices: Vec<DeviceIp>,
    /// Wall time of the run.
    pub elapsed: Duration,
}

impl PreflightReport {
    /// Whether any finding is an error.
    pub fn has_errors(&self) -> bool {
        snow_api::has_errors(&self.findings)
    }
}

/// One call preflight makes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Call {
    Describe,
    Software,
    InstanceTypes,
    Image(String),
    Tagged(String),
    KeyPair(String),
}

impl Call {
    fn service(&self) -> Service {
        match self {
            Call::Describe | Call::Software => Service::DeviceApi,
            _ => Service::Ec2,
        }
    }
}

#[derive(Debug, Clone)]
enum Answer {
    Describe(Result<DeviceDescription, DeviceError>),
    Software(Result<DeviceSoftware, DeviceError>),
    InstanceTypes(Result<Vec<InstanceTypeInfo>, DeviceError>),
    Image(Result<Option<Image>, DeviceError>),
    Tagged(Result<Vec<Image>, DeviceError>),
    KeyPair(Result<bool, DeviceError>),
}

impl Answer {
    fn error(&self) -> Option<&DeviceError> {
        match self {
            Answer::Describe(r) => r.as_ref().err(),
            Answer::Software(r) => r.as_ref().err(),
            Answer::InstanceTypes(r) => r.as_ref().err(),
            Answer::Image(r) => r.as_ref().err(),
            Answer::Tagged(r) => r.as_ref().err(),
            Answer::KeyPair(r) => r.as_ref().err(),
        }
    }
}

/// The calls one device needs: DescribeDevice, DescribeDeviceSoftware, DescribeInstanceTypes, one
/// DescribeImages per distinct AMI id (or per OS when looking AMIs up by tag) and one
/// DescribeKeyPairs per distinct key name.
fn calls_for(plan: &Plan, device: DeviceIp) -> Vec<Call> {
    let mut calls = BTreeSet::from([Call::Describe, Call::Software, Call::InstanceTypes]);
    for m in plan.machines_on(device) {
        match &m.ami_id {
            Some(ami) => calls.insert(Call::Image(ami.clone())),
            None => calls.insert(Call::Tagged(m.os_family.clone().unwrap_or_default())),
        };
        if let Some(key) = &m.ssh_key_name {
            calls.insert(Call::KeyPair(key.clone()));
        }
    }
    calls.into_iter().collect()
}

fn ami_tags(plan: &Plan, os: &str) -> Vec<(String, String)> {
    crate::plan::ami_tags(plan.kubernetes_version.as_deref(), os)
}

async fn make_call<D: Device>(device: &D, plan: &Plan, call: &Call) -> Answer {
    match call {
        Call::Describe => Answer::Describe(device.describe_device().await),
        Call::Software => Answer::Software(device.describe_device_software().await),
        Call::InstanceTypes => Answer::InstanceTypes(device.instance_types().await),
        Call::Image(ami) => Answer::Image(device.describe_image(ami).await),
        Call::Tagged(os) => Answer::Tagged(device.images_tagged(&ami_tags(plan, os)).await),
        Call::KeyPair(key) => Answer::KeyPair(device.key_pair_exists(key).await),
    }
}

type Answers = BTreeMap<DeviceIp, BTreeMap<Call, Answer>>;

/// Runs every check of `plan` against `devices`.
///
/// `without_credentials` are listed devices that have no client (no profile in the credentials
/// file); each gets an error finding. `progress` is called once per device when its last call
/// returns.
pub async fn run<D: Device>(
    plan: &Plan,
    devices: &[D],
    without_credentials: &[DeviceIp],
    options: &PreflightOptions,
    progress: &mut impl FnMut(&DeviceProgress),
) -> PreflightReport {
    let started = Instant::now();
    let wanted = plan.devices();
    let by_ip: BTreeMap<DeviceIp, &D> = devices
        .iter()
        .filter(|d| wanted.contains(&d.ip()))
        .map(|d| (d.ip(), d))
        .collect();
    let work: Vec<(DeviceIp, Vec<Call>)> = wanted
        .iter()
        .filter(|ip| by_ip.contains_key(ip))
        .map(|ip| (*ip, calls_for(plan, *ip)))
        .collect();

    let endpoint = endpoint_checks(plan, options);
    let (answers, endpoint_findings) = match options.schedule {
        Schedule::Concurrent => {
            let device_calls = run_concurrent(plan, &by_ip, &work, started, progress);
            tokio::join!(device_calls, endpoint)
        }
        Schedule::Sequential => {
            let mut answers = Answers::new();
            for (ip, calls) in &work {
                let device = by_ip[ip];
                let mut failed = 0;
                for call in calls {
                    let answer = make_call(device, plan, call).await;
                    failed += usize::from(answer.error().is_some());
                    answers.entry(*ip).or_default().insert(call.clone(), answer);
                }
                progress(&DeviceProgress {
                    device: *ip,
                    calls: calls.len(),
                    failed,
                    elapsed: started.elapsed(),
                });
            }
            (answers, endpoint.await)
        }
    };

    let mut findings = Vec::new();
    for ip in &wanted {
        if without_credentials.contains(ip) || !by_ip.contains_key(ip) {
            findings.push(
                Finding::error(
                    "preflight.credentials",
                    format!("credentials not found for device {ip}"),
                )
                .device(ip.to_string())
                .hint(format!(
                    "add a [{ip}] profile with aws_access_key_id and aws_secret_access_key to the credentials file"
                )),
            );
            continue;
        }
        let empty = BTreeMap::new();
        let device_answers = answers.get(ip).unwrap_or(&empty);
        findings.extend(device_findings(plan, *ip, device_answers));
    }
    findings.extend(cross_device_summaries(plan, &answers));
    findings.extend(endpoint_findings);
    PreflightReport {
        findings,
        devices: wanted,
        elapsed: started.elapsed(),
    }
}

async fn run_concurrent<D: Device>(
    plan: &Plan,
    by_ip: &BTreeMap<DeviceIp, &D>,
    work: &[(DeviceIp, Vec<Call>)],
    started: Instant,
    progress: &mut impl FnMut(&DeviceProgress),
) -> Answers {
    let mut pending: BTreeMap<DeviceIp, (usize, usize)> = work
        .iter()
        .map(|(ip, calls)| (*ip, (calls.len(), 0)))
        .collect();
    let mut in_flight = FuturesUnordered::new();
    for (ip, calls) in work {
        let device = by_ip[ip];
        for call in calls {
            in_flight.push(async move { (*ip, call.clone(), make_call(device, plan, call).await) });
        }
    }
    let mut answers = Answers::new();
    while let Some((ip, call, answer)) = in_flight.next().await {
        if let Some((left, failed)) = pending.get_mut(&ip) {
            *left -= 1;
            *failed += usize::from(answer.error().is_some());
            if *left == 0 {
                progress(&DeviceProgress {
                    device: ip,
                    calls: answers.get(&ip).map_or(0, BTreeMap::len) + 1,
                    failed: *failed,
                    elapsed: started.elapsed(),
                });
            }
        }
        answers.entry(ip).or_default().insert(call, answer);
    }
    answers
}

/// The findings of one device, from its answers.
fn device_findings(plan: &Plan, ip: DeviceIp, answers: &BTreeMap<Call, Answer>) -> Vec<Finding> {
    let mut check = DeviceCheck {
        plan,
        ip,
        device: ip.to_string(),
        answers,
        unreachable: BTreeSet::new(),
        findings: Vec::new(),
    };
    check.reachability();
    let description = check.unlocked();
    check.software_version();
    let types = check.instance_types();
    for m in plan.machines_on(ip) {
        check.ami(m);
        check.key_pair(m);
        if let (Some(wanted), Some(types)) = (&m.instance_type, types) {
            check.instance_type(m, wanted, types);
        }
    }
    if let (Some(description), Some(types)) = (description, types) {
        check
            .findings
            .extend(capacity_finding(plan, ip, description, types));
    }
    check.findings
}

/// The findings of one device, built from its answers check by check.
struct DeviceCheck<'a> {
    plan: &'a Plan,
    ip: DeviceIp,
    /// The IP as findings carry it.
    device: String,
    answers: &'a BTreeMap<Call, Answer>,
    /// The services that could not be reached: their checks are not reported again.
    unreachable: BTreeSet<Service>,
    findings: Vec<Finding>,
}

impl<'a> DeviceCheck<'a> {
    /// Reachability: one finding per port that cannot be used, from its first such error.
    fn reachability(&mut self) {
        for service in [Service::Ec2, Service::DeviceApi] {
            let failure = self
                .answers
                .iter()
                .filter(|(call, _)| call.service() == service)
                .filter_map(|(_, a)| a.error())
                .find(|e| e.kind.is_reachability());
            if let Some(err) = failure {
                self.unreachable.insert(service);
                self.findings.push(
                    Finding::error(
                        "preflight.reachability",
                        format!("{err}; the checks that need port {} were not run", err.port),
                    )
                    .device(&self.device)
                    .hint(err.hint()),
                );
            }
        }
    }

    /// A call that failed for another reason than reachability is its check's error.
    fn call_error(&self, check: &str, err: &DeviceError, what: &str) -> Option<Finding> {
        if self.unreachable.contains(&err.service) && err.kind.is_reachability() {
            return None;
        }
        Some(
            Finding::error(check, format!("cannot check {what}: {err}"))
                .device(&self.device)
                .hint(err.hint()),
        )
    }

    /// A call error about one machine config's field.
    fn field_error(
        &mut self,
        check: &str,
        err: &DeviceError,
        what: &str,
        m: &MachinePlan,
        field: &str,
    ) {
        let finding = self.call_error(check, err, what);
        self.findings
            .extend(finding.map(|f| f.object(&m.object).field(field)));
    }

    /// The device is unlocked; returns its description when it answered.
    fn unlocked(&mut self) -> Option<&'a DeviceDescription> {
        let ip = self.ip;
        match self.answers.get(&Call::Describe) {
            Some(Answer::Describe(Ok(d))) => {
                match &d.unlock_state {
                    UnlockState::Unlocked => {}
                    UnlockState::Unlocking => self.findings.push(
                        Finding::error("preflight.unlocked", format!("device {ip} is still unlocking (UnlockStatus UNLOCKING)"))
                            .device(&self.device)
                            .hint("wait until `snowballEdge describe-device` shows UNLOCKED, then validate again"),
                    ),
                    state => self.findings.push(
                        Finding::error("preflight.unlocked", format!("device {ip} is not unlocked (UnlockStatus {})", state.as_str()))
                            .device(&self.device)
                            .hint(format!("unlock it with `snowballEdge unlock-device --endpoint https://{ip} --manifest-file … --unlock-code …`")),
                    ),
                }
                Some(d)
            }
            Some(Answer::Describe(Err(e))) => {
                let finding = self.call_error("preflight.unlocked", e, "the unlock state");
                self.findings.extend(finding);
                None
            }
            _ => None,
        }
    }

    /// The installed software is recent enough and needs no reboot.
    fn software_version(&mut self) {
        let ip = self.ip;
        match self.answers.get(&Call::Software) {
            Some(Answer::Software(Ok(s))) => match s.version_number() {
                None => self.findings.push(
                    Finding::error("preflight.software-version", format!("the installed software version {:?} on device {ip} is not a number", s.installed_version))
                        .device(&self.device)
                        .hint("check the device with `snowballEdge describe-device-software`"),
                ),
                Some(v) if v < MIN_SOFTWARE_VERSION => self.findings.push(
                    Finding::error("preflight.software-version", format!("the software version installed on device {ip} is {v}, below the minimum supported version {MIN_SOFTWARE_VERSION}"))
                        .device(&self.device)
                        .hint("update the device: `snowballEdge download-updates`, then `snowballEdge install-updates`, then reboot it"),
                ),
                Some(_) if s.install_state == "REQUIRE_REBOOT" => self.findings.push(
                    Finding::warning("preflight.software-version", format!("an update on device {ip} waits for a reboot (InstallState REQUIRE_REBOOT)"))
                        .device(&self.device)
                        .hint("reboot the device with `snowballEdge reboot-device` before creating the cluster"),
                ),
                Some(_) => {}
            },
            Some(Answer::Software(Err(e))) => {
                let finding = self.call_error("preflight.software-version", e, "the software version");
                self.findings.extend(finding);
            }
            _ => {}
        }
    }

    /// The instance types the device offers, when it answered.
    fn instance_types(&mut self) -> Option<&'a Vec<InstanceTypeInfo>> {
        match self.answers.get(&Call::InstanceTypes) {
            Some(Answer::InstanceTypes(Ok(t))) => Some(t),
            Some(Answer::InstanceTypes(Err(e))) => {
                let finding = self.call_error("preflight.instance-type", e, "the instance types");
                self.findings.extend(finding);
                None
            }
            _ => None,
        }
    }

    /// The machine config's AMI exists on the device (by id, or by tag when amiID is empty).
    fn ami(&mut self, m: &MachinePlan) {
        let ip = self.ip;
        let Some(ami) = &m.ami_id else {
            self.ami_by_tag(m);
            return;
        };
        match self.answers.get(&Call::Image(ami.clone())) {
            Some(Answer::Image(Ok(Some(_)))) => {}
            Some(Answer::Image(Ok(None))) => self.findings.push(
                Finding::error(
                    "preflight.ami",
                    format!("AMI {ami} does not exist on device {ip}"),
                )
                .object(&m.object)
                .field("spec.amiID")
                .device(&self.device)
                .hint(format!(
                    "import the AMI on {ip} (or correct amiID): every device listed by {} needs it",
                    m.object
                )),
            ),
            Some(Answer::Image(Err(e))) => {
                self.field_error("preflight.ami", e, &format!("AMI {ami}"), m, "spec.amiID");
            }
            _ => {}
        }
    }

    /// amiID is empty: the AMI tagged with the Kubernetes version and OS family that will be used.
    fn ami_by_tag(&mut self, m: &MachinePlan) {
        let ip = self.ip;
        let os = m.os_family.clone().unwrap_or_default();
        let tags = ami_tags(self.plan, &os)
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(", ");
        match self.answers.get(&Call::Tagged(os)) {
            Some(Answer::Tagged(Ok(images))) if images.is_empty() => self.findings.push(
                Finding::error("preflight.ami", format!("amiID is empty and device {ip} has no AMI tagged {tags}"))
                    .object(&m.object)
                    .field("spec.amiID")
                    .device(&self.device)
                    .hint("set amiID, or import an EKS Distro AMI on the device and tag it with the Kubernetes version and OS family"),
            ),
            Some(Answer::Tagged(Ok(images))) => {
                let chosen = &images[0];
                let name = chosen.name.as_deref().map(|n| format!(" ({n})")).unwrap_or_default();
                let (severity, extra) = if images.len() > 1 {
                    (Severity::Warning, format!("; {} AMIs match, the first by id is used", images.len()))
                } else {
                    (Severity::Info, String::new())
                };
                self.findings.push(
                    Finding::new(severity, "preflight.ami", format!("amiID is empty: AMI {}{name} tagged {tags} will be used on device {ip}{extra}", chosen.id))
                        .object(&m.object)
                        .field("spec.amiID")
                        .device(&self.device)
                        .hint("set amiID to pin the image"),
                );
            }
            Some(Answer::Tagged(Err(e))) => {
                self.field_error("preflight.ami", e, "the AMIs by tag", m, "spec.amiID");
            }
            _ => {}
        }
    }

    /// The machine config's SSH key pair exists on the device (or one will be generated).
    fn key_pair(&mut self, m: &MachinePlan) {
        let ip = self.ip;
        let Some(key) = &m.ssh_key_name else {
            self.findings.push(
                Finding::info("preflight.key-pair", format!("sshKeyName is empty: create uses the default key pair eksa-default-{}-<uuid4> (generated once as ./{}/eks-a-id_rsa, its name recorded for re-runs) and imports it on device {ip} if the device lacks it", self.plan.cluster, self.plan.cluster))
                    .object(&m.object)
                    .field("spec.sshKeyName")
                    .device(&self.device),
            );
            return;
        };
        match self.answers.get(&Call::KeyPair(key.clone())) {
            Some(Answer::KeyPair(Ok(true))) => {}
            Some(Answer::KeyPair(Ok(false))) => self.findings.push(
                Finding::error("preflight.key-pair", format!("key pair {key} does not exist on device {ip}"))
                    .object(&m.object)
                    .field("spec.sshKeyName")
                    .device(&self.device)
                    .hint(format!("import the public key on {ip} with `aws ec2 import-key-pair --key-name {key} --endpoint-url https://{ip}:8243 --profile {ip} …`, or leave sshKeyName empty so that snowctl generates and imports one")),
            ),
            Some(Answer::KeyPair(Err(e))) => {
                self.field_error("preflight.key-pair", e, &format!("key pair {key}"), m, "spec.sshKeyName");
            }
            _ => {}
        }
    }

    /// The device offers the machine config's instance type, with enough default vCPU.
    fn instance_type(&mut self, m: &MachinePlan, wanted: &str, types: &[InstanceTypeInfo]) {
        let ip = self.ip;
        let finding = match types.iter().find(|t| t.name == wanted) {
            None => Finding::error("preflight.instance-type", format!("instance type {wanted} is not offered by device {ip}"))
                .hint(format!("choose an instance type every device of {} offers, or remove {ip} from its devices; {ip} offers: {}", m.object, offered(types))),
            Some(t) => match t.default_vcpus {
                Some(v) if v < MIN_DEFAULT_VCPUS => Finding::error("preflight.instance-type", format!("instance type {wanted} has {v} default vCPU on device {ip}; at least {MIN_DEFAULT_VCPUS} are needed"))
                    .hint("choose a larger instance type such as sbe-c.large"),
                _ => return,
            },
        };
        self.findings.push(
            finding
                .object(&m.object)
                .field("spec.instanceType")
                .device(&self.device),
        );
    }
}

fn offered(types: &[InstanceTypeInfo]) -> String {
    let mut names: Vec<&str> = types.iter().map(|t| t.name.as_str()).collect();
    names.sort_unstable();
    let max = crate::limits::MAX_INSTANCE_TYPES_LISTED;
    if names.len() > max {
        let more = names.len() - max;
        names.truncate(max);
        format!("{} and {more} more", names.join(", "))
    } else if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}

const PLACEMENT: &str = "assuming CAPAS spreads each machine config's machines round-robin over its devices in list order";

fn capacity_finding(
    plan: &Plan,
    ip: DeviceIp,
    description: &DeviceDescription,
    types: &[InstanceTypeInfo],
) -> Option<Finding> {
    let device = ip.to_string();
    let mut vcpus: u64 = 0;
    let mut memory_mib: u64 = 0;
    let mut machines = 0u32;
    let mut parts = Vec::new();
    let mut unknown = Vec::new();
    for m in plan.machines_on(ip) {
        let n = m.machines_on(ip);
        if n == 0 {
            continue;
        }
        let Some(wanted) = &m.instance_type else {
            continue;
        };
        match types.iter().find(|t| &t.name == wanted) {
            Some(InstanceTypeInfo {
                default_vcpus: Some(v),
                memory_mib: Some(mem),
                ..
            }) => {
                machines += n;
                vcpus += u64::from(n) * u64::from(*v);
                memory_mib += u64::from(n) * mem;
                parts.push(format!("{n} × {wanted} ({})", m.name));
            }
            _ => unknown.push(format!("{n} × {wanted} ({})", m.name)),
        }
    }
    if machines == 0 && unknown.is_empty() {
        return None;
    }
    let vcpu_cap = description.capacity("vCPU");
    let memory_cap = description.capacity("Memory");
    let (Some(vcpu_cap), Some(memory_cap)) = (vcpu_cap, memory_cap) else {
        return Some(
            Finding::warning("preflight.capacity", format!("device {ip} does not report vCPU and Memory in DeviceCapacities; capacity was not checked"))
                .device(&device),
        );
    };
    let available_mib = to_mib(memory_cap.available, &memory_cap.unit);
    let needs = format!(
        "{} needs {vcpus} vCPU and {} of memory on device {ip} ({}{}; {PLACEMENT})",
        plan.cluster,
        gib(memory_mib),
        parts.join(" + "),
        if unknown.is_empty() {
            String::new()
        } else {
            format!(
                "; not counted, type unknown on the device: {}",
                unknown.join(", ")
            )
        }
    );
    let have = format!(
        "{} vCPU and {} available",
        vcpu_cap.available,
        available_mib.map_or_else(
            || format!("{} {}", memory_cap.available, memory_cap.unit),
            gib
        )
    );
    let short_cpu = vcpus > vcpu_cap.available;
    let short_mem = available_mib.is_some_and(|a| memory_mib > a);
    if short_cpu || short_mem {
        let what = match (short_cpu, short_mem) {
            (true, true) => "vCPU and memory",
            (true, false) => "vCPU",
            _ => "memory",
        };
        Some(
            Finding::error("preflight.capacity", format!("not enough {what} on device {ip}: {needs}, but it has {have}"))
                .device(&device)
                .hint("add devices to the machine configs, choose smaller instance types, lower the machine counts, or stop instances on the device"),
        )
    } else {
        Some(Finding::info("preflight.capacity", format!("{needs}; it has {have}")).device(&device))
    }
}

fn to_mib(value: u64, unit: &str) -> Option<u64> {
    match unit.to_ascii_lowercase().as_str() {
        "byte" | "bytes" => Some(value / (1024 * 1024)),
        "mib" | "mb" => Some(value),
        "gib" | "gb" => Some(value.saturating_mul(1024)),
        _ => None,
    }
}

fn gib(mib: u64) -> String {
    if mib.is_multiple_of(1024) {
        format!("{} GiB", mib / 1024)
    } else {
        format!("{:.1} GiB", mib as f64 / 1024.0)
    }
}

/// Per machine config: which devices lack the AMI, the key or the instance type, in one line.
fn cross_device_summaries(plan: &Plan, answers: &Answers) -> Vec<Finding> {
    let mut findings = Vec::new();
    for m in plan.machines.values() {
        let lacking = |pred: &dyn Fn(&BTreeMap<Call, Answer>) -> bool| -> Vec<String> {
            m.devices
                .iter()
                .filter(|ip| answers.get(ip).is_some_and(pred))
                .map(ToString::to_string)
                .collect()
        };
        let checked = m
            .devices
            .iter()
            .filter(|ip| answers.contains_key(ip))
            .count();
        let mut summary = |check: &str, field: &str, what: String, lacking: Vec<String>| {
            if !lacking.is_empty() && checked > 1 {
                findings.push(
                    Finding::info(
                        check,
                        format!(
                            "{what} is missing on {} of the {} devices of {}: {}",
                            lacking.len(),
                            m.devices.len(),
                            m.object,
                            lacking.join(", ")
                        ),
                    )
                    .object(&m.object)
                    .field(field),
                );
            }
        };
        if let Some(ami) = &m.ami_id {
            let l = lacking(&|a| {
                matches!(
                    a.get(&Call::Image(ami.clone())),
                    Some(Answer::Image(Ok(None)))
                )
            });
            summary("preflight.ami", "spec.amiID", format!("AMI {ami}"), l);
        }
        if let Some(key) = &m.ssh_key_name {
            let l = lacking(&|a| {
                matches!(
                    a.get(&Call::KeyPair(key.clone())),
                    Some(Answer::KeyPair(Ok(false)))
                )
            });
            summary(
                "preflight.key-pair",
                "spec.sshKeyName",
                format!("key pair {key}"),
                l,
            );
        }
        if let Some(t) = &m.instance_type {
            let l = lacking(
                &|a| matches!(a.get(&Call::InstanceTypes), Some(Answer::InstanceTypes(Ok(types))) if !types.iter().any(|x| &x.name == t)),
            );
            summary(
                "preflight.instance-type",
                "spec.instanceType",
                format!("instance type {t}"),
                l,
            );
        }
    }
    findings
}

/// Whether something holds `addr`: it accepts, or actively refuses, within `timeout` (as EKS
/// Anywhere's control-plane IP check: a refusal means a host is there). Silence means free.
pub async fn endpoint_in_use(addr: SocketAddr, timeout: Duration) -> bool {
    match tokio::time::timeout(timeout, tokio::net::TcpStream::connect(addr)).await {
        Ok(Ok(_)) => true,
        Ok(Err(e)) => matches!(
            e.kind(),
            std::io::ErrorKind::ConnectionRefused | std::io::ErrorKind::ConnectionReset
        ),
        Err(_) => false,
    }
}

/// The control-plane endpoint checks: not in use (create only) and not the admin instance's IP.
async fn endpoint_checks(plan: &Plan, options: &PreflightOptions) -> Vec<Finding> {
    let Some(host) = plan.endpoint.clone() else {
        return Vec::new();
    };
    let field = "spec.controlPlaneConfiguration.endpoint.host";
    let object = snow_api::spec::object_id("Cluster", &plan.cluster);
    let Ok(ip) = host.parse::<IpAddr>() else {
        // Static validation reports a non-IP endpoint.
        return Vec::new();
    };
    let in_use = async {
        if options.mode != Mode::Create {
            return None;
        }
        if options.skip_ip_check || plan.skip_ip_check_annotation {
            let why = if options.skip_ip_check {
                "as asked"
            } else {
                "the skip-ip-check annotation"
            };
            return Some(
                Finding::info(
                    "preflight.endpoint-in-use",
                    format!("skipped the check that {ip} is unused ({why})"),
                )
                .object(&object)
                .field(field),
            );
        }
        let addr = SocketAddr::new(ip, options.endpoint_probe_port);
        let used = endpoint_in_use(addr, options.endpoint_probe_timeout).await;
        used.then(|| {
            Finding::error("preflight.endpoint-in-use", format!("the control-plane endpoint {ip} is already in use: something answered on {addr}"))
                .object(&object)
                .field(field)
                .hint("choose an unused IP for the control-plane endpoint, or skip this check if the address is known to be free")
        })
    };
    let admin = async {
        let imds = options.imds?;
        match tokio::time::timeout(options.imds_timeout, crate::imds::public_ipv4(imds)).await {
            Ok(Ok(Some(admin_ip))) if admin_ip == ip => Some(
                Finding::error("preflight.admin-ip", format!("the control-plane endpoint {ip} is the IP of this admin instance"))
                    .object(&object)
                    .field(field)
                    .hint("choose another IP for the control-plane endpoint"),
            ),
            Ok(Ok(_)) => None,
            Ok(Err(e)) => Some(
                Finding::info("preflight.admin-ip", format!("skipped the admin-instance IP check: instance metadata at {imds} is not usable ({e})"))
                    .object(&object)
                    .field(field),
            ),
            Err(_) => Some(
                Finding::info("preflight.admin-ip", format!("skipped the admin-instance IP check: instance metadata at {imds} did not answer within {} ms", options.imds_timeout.as_millis()))
                    .object(&object)
                    .field(field),
            ),
        }
    };
    let (a, b) = tokio::join!(in_use, admin);
    a.into_iter().chain(b).collect()
}
