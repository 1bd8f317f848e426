//! What the device tests share: `snow_test_devices::fleet` (moto and the Device API stand-in
//! per device, the clients, the seeding) and a runtime.
#![allow(dead_code, unused_imports)]

pub(crate) use snow_test_devices::fleet::*;

pub(crate) fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}
