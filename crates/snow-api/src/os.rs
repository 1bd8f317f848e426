//! The node operating systems of a Snow cluster: one type for the template, the image list and
//! the device AMI lookups.

use serde::Serialize;

/// A node operating system, as `SnowMachineConfig.spec.osFamily` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OsFamily {
    /// Ubuntu (EKS Anywhere's default): no Bottlerocket host or bootstrap containers.
    #[default]
    Ubuntu,
    /// Bottlerocket: its host containers and the Snow bootstrap container.
    Bottlerocket,
}

impl OsFamily {
    /// Both, in this order.
    pub const ALL: [OsFamily; 2] = [OsFamily::Ubuntu, OsFamily::Bottlerocket];

    /// The `osFamily` value (and the `eksa.aws.com/os-family` AMI tag's).
    pub fn as_str(self) -> &'static str {
        match self {
            OsFamily::Ubuntu => "ubuntu",
            OsFamily::Bottlerocket => "bottlerocket",
        }
    }
}

impl std::fmt::Display for OsFamily {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_os_family_values() {
        let names: Vec<&str> = OsFamily::ALL.iter().map(|os| os.as_str()).collect();
        assert_eq!(names, ["ubuntu", "bottlerocket"]);
        assert_eq!(
            serde_json::to_string(&OsFamily::Bottlerocket).unwrap(),
            "\"bottlerocket\""
        );
        assert_eq!(OsFamily::default(), OsFamily::Ubuntu);
    }
}
