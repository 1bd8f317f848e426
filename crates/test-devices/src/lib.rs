//! Test stand-ins for what surrounds a Snow cluster outside Kubernetes: devices and registries.
//!
//! - [`TestCa`]: a CA made at test time (rcgen) and per-IP server certificates, so the CA-bundle
//!   path of the clients is the real one.
//! - [`Moto`]: a real `moto_server` as a device's EC2 on `IP:8243` over TLS, started from a small
//!   launcher that adds the Snow `sbe-c.*`/`sbe-g.*` instance types to moto's table. Killed on drop.
//! - [`DeviceApiStandIn`]: the Snowball Device API on `IP:9092` (awsJson1.1 over TLS). There is no
//!   public emulator of it; this one verifies the SigV4 signature with the device's secret and
//!   serves configurable state (unlock state, software version, capacities) and faults
//!   (throttling, delay, refused DNI deletes), and holds direct network interfaces.
//! - [`FileServer`]: static files over HTTPS (release assets such as components manifests).
//! - [`BlackHole`] and [`closed_port`]: endpoints that never answer or refuse.
//! - [`InMemoryDevice`]: a [`snow_validate::Device`] with no network, optionally slowed down.
//! - [`registry`]: Debian's `docker-registry` (distribution) on loopback, plain HTTP or TLS, and
//!   small images of our own pushed to it.
//! - [`git_server`]: bare git repositories served on loopback by git's own programs: smart HTTP
//!   over TLS (`git http-backend` as a CGI program, optional token) and SSH (Debian's `sshd`
//!   forcing one client key through `git-shell`).
//! - [`elf`]: small x86-64 ELF files written by hand (static, or naming a dynamic loader), for
//!   the controller image builder's tests.
//! - [`layout`]: OCI image layouts written by hand into a directory (shapes no tool writes).
//! - [`small_disk`]: a tmpfs of a few hundred KiB that really fills up (ENOSPC), for the
//!   full-disk tests (mounting takes root).
//! - [`https`]: the TLS + HTTP/1 serving loop the stand-ins share (the Kubernetes API stand-in in
//!   `snow-test-kube` uses it too), and a one-request TLS client for tests of servers.
//!
//! Everything binds loopback addresses only.

mod ca;
mod device_api;
pub mod elf;
mod files;
pub mod fleet;
pub mod git_server;
pub mod https;
pub mod layout;
mod memory;
mod moto;
pub mod registry;
pub mod release_site;
pub mod small_disk;

pub use ca::{ServerCertificate, TestCa, self_signed_for_names};
pub use device_api::{
    DeviceApiStandIn, DeviceState, Dni, Faults, PHYSICAL_INTERFACES, StandInError,
};
pub use files::FileServer;
pub use memory::{InFlight, InMemoryDevice};
pub use moto::{Moto, MotoError, SNOW_INSTANCE_TYPES};

use std::net::{IpAddr, Ipv4Addr};
use std::sync::atomic::{AtomicU32, Ordering};

/// A two-worker multi-threaded tokio runtime, timers and IO on, for a synchronous test that
/// runs servers while it drives outside clients (skopeo, ctr).
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// A fresh loopback address `127.0.X.Y` for one test device, unique in this process and unlikely
/// to collide with another test process (the third octet comes from the process id).
pub fn loopback_ip() -> IpAddr {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let third = 16 + (std::process::id() % 200) as u8;
    let third = third.wrapping_add((n / 250) as u8);
    IpAddr::V4(Ipv4Addr::new(127, 0, third, 2 + (n % 250) as u8))
}

/// A black hole: accepts TCP connections on `ip:port` and never answers.
#[derive(Debug)]
pub struct BlackHole {
    task: tokio::task::JoinHandle<()>,
}

impl BlackHole {
    /// Starts listening (call inside a tokio runtime).
    pub async fn start(ip: IpAddr, port: u16) -> std::io::Result<BlackHole> {
        let listener = tokio::net::TcpListener::bind((ip, port)).await?;
        let task = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((stream, _)) = listener.accept().await {
                held.push(stream);
            }
        });
        Ok(BlackHole { task })
    }
}

impl Drop for BlackHole {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Whether nothing listens on `ip:port` right now (a bind succeeds and is released at once).
pub fn closed_port(ip: IpAddr, port: u16) -> bool {
    std::net::TcpListener::bind((ip, port)).is_ok()
}
