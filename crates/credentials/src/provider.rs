//! The per-device AWS SDK credentials provider.

use crate::secret::SecretString;
use aws_credential_types::Credentials;
use aws_credential_types::provider::{ProvideCredentials, future};
use snow_api::DeviceIp;
use std::fmt;

/// The name the provider reports to the SDK (visible in SDK debug output, never the keys).
pub const PROVIDER_NAME: &str = "snowctl-device-credentials";

/// The region every Snow device signs requests with.
pub const SIGNING_REGION: &str = "snow";

/// Static credentials of one Snow device, for the AWS SDK client of that device.
///
/// Plug it into an SDK config with `.credentials_provider(provider)`; it never expires and never
/// does IO. `Debug` prints the device only.
#[derive(Clone)]
pub struct DeviceCredentialsProvider {
    device: DeviceIp,
    access_key_id: SecretString,
    secret_access_key: SecretString,
}

impl DeviceCredentialsProvider {
    pub(crate) fn new(
        device: DeviceIp,
        access_key_id: SecretString,
        secret_access_key: SecretString,
    ) -> Self {
        DeviceCredentialsProvider {
            device,
            access_key_id,
            secret_access_key,
        }
    }

    /// The device these credentials sign for.
    pub fn device(&self) -> DeviceIp {
        self.device
    }

    /// The SDK credentials. NB: the SDK's `Credentials` redacts the secret key in `Debug` but
    /// prints the access key id, which snowctl treats as secret too: never log it.
    pub fn credentials(&self) -> Credentials {
        Credentials::new(
            self.access_key_id.expose_for_signing(),
            self.secret_access_key.expose_for_signing(),
            None,
            None,
            PROVIDER_NAME,
        )
    }
}

impl fmt::Debug for DeviceCredentialsProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeviceCredentialsProvider")
            .field("device", &self.device)
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &self.secret_access_key)
            .finish()
    }
}

impl ProvideCredentials for DeviceCredentialsProvider {
    fn provide_credentials<'a>(&'a self) -> future::ProvideCredentials<'a>
    where
        Self: 'a,
    {
        future::ProvideCredentials::ready(Ok(self.credentials()))
    }
}
