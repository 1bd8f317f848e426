//! moto as a Snow device's EC2: one `moto_server` per device on `IP:8243`, TLS with a
//! certificate from the test CA, started from a launcher that teaches moto the Snow instance
//! types.

use crate::ca::ServerCertificate;
use std::io::Write as _;
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The Snow instance types (name, default vCPU, memory MiB), from the AWS Snowball Edge
/// developer guide's "Supported EC2-compatible instance types" tables.
pub const SNOW_INSTANCE_TYPES: &[(&str, u32, u64)] = &[
    ("sbe-c.small", 1, 2 * 1024),
    ("sbe-c.medium", 1, 4 * 1024),
    ("sbe-c.large", 2, 8 * 1024),
    ("sbe-c.xlarge", 4, 16 * 1024),
    ("sbe-c.2xlarge", 8, 32 * 1024),
    ("sbe-c.4xlarge", 16, 64 * 1024),
    ("sbe-c.8xlarge", 32, 128 * 1024),
    ("sbe-c.12xlarge", 48, 192 * 1024),
    ("sbe-c.16xlarge", 64, 256 * 1024),
    ("sbe-c.24xlarge", 96, 384 * 1024),
    ("sbe-g.large", 2, 8 * 1024),
    ("sbe-g.xlarge", 4, 16 * 1024),
    ("sbe-g.2xlarge", 8, 32 * 1024),
    ("sbe-g.4xlarge", 16, 64 * 1024),
    ("sbe-g.8xlarge", 32, 128 * 1024),
    ("sbe-g.12xlarge", 48, 192 * 1024),
];

/// The launcher: adds the Snow types (from `SNOW_TYPES`, JSON) to moto's instance-type table,
/// removes `SNOW_DROP_TYPES` and, with `SNOW_ONLY=1`, every non-Snow type (a device offers only
/// Snow types), then runs moto's own server entry point with the given arguments.
const LAUNCHER: &str = r#"
import json, os, sys
import moto.ec2.models.instance_types as it

for name, vcpus, mib in json.loads(os.environ.get("SNOW_TYPES", "[]")):
    it.INSTANCE_TYPES[name] = {
        "InstanceType": name,
        "CurrentGeneration": True,
        "SupportedUsageClasses": ["on-demand"],
        "SupportedRootDeviceTypes": ["ebs"],
        "ProcessorInfo": {"SupportedArchitectures": ["x86_64"]},
        "VCpuInfo": {"DefaultVCpus": vcpus, "DefaultCores": max(1, vcpus // 2), "DefaultThreadsPerCore": 2 if vcpus > 1 else 1},
        "MemoryInfo": {"SizeInMiB": mib},
    }
if os.environ.get("SNOW_ONLY") == "1":
    for name in list(it.INSTANCE_TYPES):
        if not name.startswith(("sbe-", "sbe1", "snc")):
            del it.INSTANCE_TYPES[name]
for name in json.loads(os.environ.get("SNOW_DROP_TYPES", "[]")):
    it.INSTANCE_TYPES.pop(name, None)
it.InstanceTypeBackend.instance_types = [it.InstanceType(n) for n in it.INSTANCE_TYPES]

from moto.server import main
main(sys.argv[1:])
"#;

/// Starting moto failed.
#[derive(Debug, thiserror::Error)]
pub enum MotoError {
    /// Python or moto is missing.
    #[error(
        "moto is not installed for {python} ({detail}); install it with `{python} -m pip install 'moto[server]==5.2.5'` (.ci/run does)"
    )]
    NotInstalled {
        /// The interpreter tried.
        python: String,
        /// What went wrong.
        detail: String,
    },
    /// Files or the process could not be set up.
    #[error("starting moto: {0}")]
    Io(#[from] std::io::Error),
    /// The server did not listen in time.
    #[error("moto on {addr} did not listen within {within:?}; its log:\n{log}")]
    NotListening {
        /// The address.
        addr: SocketAddr,
        /// The wait.
        within: Duration,
        /// moto's output.
        log: String,
    },
}

/// A running moto server; killed when dropped.
#[derive(Debug)]
pub struct Moto {
    child: Child,
    addr: SocketAddr,
    dir: tempfile::TempDir,
}

/// The Python interpreter: `$SNOWCTL_PYTHON`, else `python3`.
fn python() -> String {
    std::env::var("SNOWCTL_PYTHON").unwrap_or_else(|_| "python3".to_owned())
}

impl Moto {
    /// Starts moto on `ip:port` with the certificate, offering the Snow types except
    /// `drop_types`, and waits until it listens.
    pub fn start(
        ip: IpAddr,
        port: u16,
        certificate: &ServerCertificate,
        drop_types: &[&str],
    ) -> Result<Moto, MotoError> {
        let python = python();
        let probe = Command::new(&python)
            .args(["-c", "import moto.server, flask"])
            .output()
            .map_err(|e| MotoError::NotInstalled {
                python: python.clone(),
                detail: e.to_string(),
            })?;
        if !probe.status.success() {
            return Err(MotoError::NotInstalled {
                python,
                detail: String::from_utf8_lossy(&probe.stderr).trim().to_owned(),
            });
        }
        let dir = tempfile::tempdir()?;
        let write = |name: &str, text: &str| -> std::io::Result<PathBuf> {
            let path = dir.path().join(name);
            std::fs::File::create(&path)?.write_all(text.as_bytes())?;
            Ok(path)
        };
        let launcher = write("launcher.py", LAUNCHER)?;
        let cert = write("server.pem", &certificate.cert_pem)?;
        let key = write("server.key", &certificate.key_pem)?;
        let log = std::fs::File::create(dir.path().join("moto.log"))?;
        let types: Vec<(&str, u32, u64)> = SNOW_INSTANCE_TYPES.to_vec();
        let child = Command::new(&python)
            .arg(&launcher)
            .args(["-H", &ip.to_string(), "-p", &port.to_string()])
            .arg("-c")
            .arg(&cert)
            .arg("-k")
            .arg(&key)
            .env("MOTO_ALLOW_NONEXISTENT_REGION", "true")
            .env("MOTO_EC2_LOAD_DEFAULT_AMIS", "false")
            .env("SNOW_TYPES", json_types(&types))
            .env("SNOW_ONLY", "1")
            .env("SNOW_DROP_TYPES", json_names(drop_types))
            // moto's request recorder: every request, appended to a file `actions` reads.
            .env("MOTO_ENABLE_RECORDING", "1")
            .env("MOTO_RECORDER_FILEPATH", dir.path().join("recording"))
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()?;
        let mut moto = Moto {
            child,
            addr: SocketAddr::new(ip, port),
            dir,
        };
        let within = Duration::from_secs(30);
        let started = Instant::now();
        loop {
            if TcpStream::connect_timeout(&moto.addr, Duration::from_millis(200)).is_ok() {
                return Ok(moto);
            }
            let exited = moto.child.try_wait().ok().flatten().is_some();
            if exited || started.elapsed() > within {
                return Err(MotoError::NotListening {
                    addr: moto.addr,
                    within,
                    log: moto.log(),
                });
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The address moto listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Sets moto's IAM enforcement (its `/moto-api/reset-auth`): after `free_requests` more
    /// requests, every request must be signed with a key of a user in moto's IAM and be allowed by
    /// the user's policies (`INITIAL_NO_AUTH_ACTION_COUNT`, changed at run time). Sent by Python's
    /// urllib over TLS trusting `ca_pem` (moto needs Python anyway).
    pub fn reset_auth(&self, ca_pem: &str, free_requests: u32) -> Result<(), String> {
        let ca = self.dir.path().join("ca.pem");
        std::fs::write(&ca, ca_pem).map_err(|e| e.to_string())?;
        let url = format!("https://{}/moto-api/reset-auth", self.addr);
        // text/plain: moto reads the raw body, which Flask leaves empty for form posts.
        let script = [
            "import ssl, sys, urllib.request",
            "ctx = ssl.create_default_context(cafile=sys.argv[1])",
            "req = urllib.request.Request(sys.argv[2], data=sys.argv[3].encode(), method='POST', headers={'Content-Type': 'text/plain'})",
            "print(urllib.request.urlopen(req, context=ctx, timeout=10).read().decode())",
        ]
        .join("\n");
        let out = Command::new(python())
            .arg("-c")
            .arg(script)
            .arg(&ca)
            .arg(&url)
            .arg(free_requests.to_string())
            .output()
            .map_err(|e| e.to_string())?;
        let text = String::from_utf8_lossy(&out.stdout);
        if out.status.success() && text.contains("\"status\": \"ok\"") {
            Ok(())
        } else {
            Err(format!(
                "moto reset-auth failed: {text}{}",
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    }

    /// The `Action` of every request moto answered so far, in order (from moto's request
    /// recorder: one JSON line per request, the body base64-encoded when it was bytes).
    /// Requests to `/moto-api/` are not recorded.
    pub fn actions(&self) -> Vec<String> {
        use base64::Engine as _;
        let text = std::fs::read_to_string(self.dir.path().join("recording")).unwrap_or_default();
        let mut actions = Vec::new();
        for line in text.lines() {
            let Ok(entry) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            let body = entry["body"].as_str().unwrap_or_default();
            let body = if entry["body_encoded"] == true {
                base64::engine::general_purpose::STANDARD
                    .decode(body)
                    .map(|b| String::from_utf8_lossy(&b).into_owned())
                    .unwrap_or_default()
            } else {
                body.to_owned()
            };
            let url = entry["url"].as_str().unwrap_or_default();
            let query = url.split_once('?').map_or("", |(_, q)| q);
            let action = body
                .split('&')
                .chain(query.split('&'))
                .find_map(|kv| kv.strip_prefix("Action="));
            actions.push(action.unwrap_or("(no Action)").to_owned());
        }
        actions
    }

    /// What moto wrote so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("moto.log")).unwrap_or_default()
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn json_types(types: &[(&str, u32, u64)]) -> String {
    let items: Vec<String> = types
        .iter()
        .map(|(n, v, m)| format!("[\"{n}\", {v}, {m}]"))
        .collect();
    format!("[{}]", items.join(", "))
}

fn json_names(names: &[&str]) -> String {
    let items: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
    format!("[{}]", items.join(", "))
}
