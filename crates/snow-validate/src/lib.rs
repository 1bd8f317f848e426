//! Device clients and preflight checks for Snow clusters.
//!
//! This crate is the only one in the workspace that talks to Snow devices: EC2 on
//! `https://IP:8243` and the Snowball Device API on `https://IP:9092`. Its checks run concurrently
//! across devices and produce the same findings as static validation
//! ([`snow_api`'s `Finding`](https://docs.rs/snow-api)).
//!
//! Status: a skeleton. The device clients and checks arrive with the preflight issue.
