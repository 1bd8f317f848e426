//! Device addresses.

use serde::{Serialize, Serializer};
use std::{fmt, net::IpAddr, str::FromStr};

/// The IP address of a Snowball Edge device (IPv4 or IPv6). It can only hold a valid address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DeviceIp(IpAddr);

/// The text was not an IP address.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{input:?} is not an IP address")]
pub struct InvalidDeviceIp {
    /// What was given.
    pub input: String,
}

impl DeviceIp {
    /// The address.
    pub fn ip(&self) -> IpAddr {
        self.0
    }
}

impl From<IpAddr> for DeviceIp {
    fn from(ip: IpAddr) -> Self {
        DeviceIp(ip)
    }
}

impl FromStr for DeviceIp {
    type Err = InvalidDeviceIp;

    /// Parses an address; surrounding whitespace is not accepted (callers trim where the file
    /// format allows it).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.parse::<IpAddr>()
            .map(DeviceIp)
            .map_err(|_| InvalidDeviceIp {
                input: s.to_owned(),
            })
    }
}

impl fmt::Display for DeviceIp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl Serialize for DeviceIp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_v4_and_v6_and_rejects_the_rest() {
        assert_eq!(
            "192.168.1.10".parse::<DeviceIp>().unwrap().to_string(),
            "192.168.1.10"
        );
        assert_eq!(
            "fe80::1".parse::<DeviceIp>().unwrap().to_string(),
            "fe80::1"
        );
        assert!("".parse::<DeviceIp>().is_err());
        assert!(" 1.2.3.4".parse::<DeviceIp>().is_err());
        assert!("1.2.3".parse::<DeviceIp>().is_err());
        assert!("default".parse::<DeviceIp>().is_err());
    }
}
