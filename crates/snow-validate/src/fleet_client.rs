//! [`FleetDevice`] and [`CleanupDevice`] for the real clients: the reads and writes of the
//! device chores.

use crate::cleanup::CleanupDevice;
use crate::client::{SnowDevice, is_not_found, next_page};
use crate::device::DirectNetworkInterface;
use crate::error::DeviceError;
use crate::inventory::{FleetDevice, Instance, TaggedImage, image_from_tags, instance_from_tags};
use aws_sdk_ec2::primitives::Blob;

use crate::limits::MAX_PAGES;

impl FleetDevice for SnowDevice {
    async fn instances(&self) -> Result<Vec<Instance>, DeviceError> {
        let mut all = Vec::new();
        let mut token: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let out = self
                .config()
                .retry
                .run(|| async {
                    self.ec2()
                        .describe_instances()
                        .set_next_token(token.clone())
                        .send()
                        .await
                        .map_err(|e| self.ec2_error(e))
                })
                .await?;
            for i in out.reservations().iter().flat_map(|r| r.instances()) {
                let Some(id) = i.instance_id() else { continue };
                let state = i
                    .state()
                    .and_then(|s| s.name())
                    .map(|n| n.as_str().to_owned())
                    .unwrap_or_default();
                let instance_type = i
                    .instance_type()
                    .map(|t| t.as_str().to_owned())
                    .unwrap_or_default();
                let tags = i
                    .tags()
                    .iter()
                    .filter_map(|t| Some((t.key()?, t.value().unwrap_or_default())));
                let mut instance = instance_from_tags(id.to_owned(), state, instance_type, tags);
                instance.image_id = i.image_id().map(str::to_owned);
                instance.key_name = i.key_name().map(str::to_owned);
                instance.addresses = [i.private_ip_address(), i.public_ip_address()]
                    .into_iter()
                    .flatten()
                    .map(str::to_owned)
                    .collect();
                all.push(instance);
            }
            token = next_page(out.next_token());
            if token.is_none() {
                break;
            }
        }
        Ok(all)
    }

    async fn images(&self) -> Result<Vec<TaggedImage>, DeviceError> {
        let out = self
            .config()
            .retry
            .run(|| async {
                self.ec2()
                    .describe_images()
                    .send()
                    .await
                    .map_err(|e| self.ec2_error(e))
            })
            .await?;
        let mut images: Vec<TaggedImage> = out
            .images()
            .iter()
            .filter_map(|i| {
                let tags = i
                    .tags()
                    .iter()
                    .filter_map(|t| Some((t.key()?, t.value().unwrap_or_default())));
                Some(image_from_tags(
                    i.image_id()?.to_owned(),
                    i.name().map(str::to_owned),
                    tags,
                ))
            })
            .collect();
        images.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(images)
    }

    async fn key_pairs(&self) -> Result<Vec<String>, DeviceError> {
        let out = self
            .config()
            .retry
            .run(|| async {
                self.ec2()
                    .describe_key_pairs()
                    .send()
                    .await
                    .map_err(|e| self.ec2_error(e))
            })
            .await?;
        let mut names: Vec<String> = out
            .key_pairs()
            .iter()
            .filter_map(|k| k.key_name().map(str::to_owned))
            .collect();
        names.sort();
        Ok(names)
    }

    async fn direct_network_interfaces(&self) -> Result<Vec<DirectNetworkInterface>, DeviceError> {
        self.device_api().describe_direct_network_interfaces().await
    }

    async fn import_key_pair(&self, name: &str, public_key: &[u8]) -> Result<(), DeviceError> {
        let result = self
            .config()
            .retry
            .run(|| async {
                self.ec2()
                    .import_key_pair()
                    .key_name(name)
                    .public_key_material(Blob::new(public_key))
                    .send()
                    .await
                    .map_err(|e| self.ec2_error(e))
            })
            .await;
        match result {
            // Imported meanwhile (a concurrent run): the name exists, which is what was asked.
            Err(err) if is_not_found(&err, &["InvalidKeyPair.Duplicate"]) => Ok(()),
            other => other.map(|_| ()),
        }
    }
}

impl CleanupDevice for SnowDevice {
    async fn delete_direct_network_interface(&self, arn: &str) -> Result<bool, DeviceError> {
        self.device_api().delete_direct_network_interface(arn).await
    }

    async fn delete_tags(&self, instance_id: &str, keys: &[String]) -> Result<(), DeviceError> {
        if keys.is_empty() {
            return Ok(());
        }
        self.config()
            .retry
            .run(|| async {
                let mut request = self.ec2().delete_tags().resources(instance_id);
                for key in keys {
                    request = request.tags(aws_sdk_ec2::types::Tag::builder().key(key).build());
                }
                request.send().await.map_err(|e| self.ec2_error(e))
            })
            .await
            .map(|_| ())
    }

    async fn terminate_instance(&self, instance_id: &str) -> Result<(), DeviceError> {
        self.config()
            .retry
            .run(|| async {
                self.ec2()
                    .terminate_instances()
                    .instance_ids(instance_id)
                    .send()
                    .await
                    .map_err(|e| self.ec2_error(e))
            })
            .await
            .map(|_| ())
    }
}
