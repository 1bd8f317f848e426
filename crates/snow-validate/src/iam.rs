//! A device's IAM over its Query API: form-encoded `POST /` (`Action=…&Version=2010-05-08`),
//! SigV4 as service `iam` in region `snow`, XML answers. Only the calls a scoped user needs.
//!
//! Not aws-sdk-iam: one more SDK crate would cost build time for eight small calls. The XML is
//! read with aws-smithy-xml (already built for aws-sdk-ec2): only the named fields, each one
//! required, any other shape a [`ErrorKind::Protocol`] error naming the field.
//!
//! On a Snow device IAM listens on port 6078 ([`ClientConfig::iam_port`]); moto, which serves
//! every service on one port, routes a request to IAM by the service name of its SigV4 scope.

use crate::client::{ClientConfig, Trust};
use crate::error::{DeviceError, ErrorKind, Service, classify_service};
use crate::limits::MAX_PAGES;
use crate::signed::SignedEndpoint;
use aws_smithy_xml::decode::{Document, ScopedDecoder, XmlDecodeError, try_data};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use snow_api::DeviceIp;
use snow_credentials::{AccessKey, DeviceCredentialsProvider, SecretString};
use std::fmt;

/// The SigV4 signing name of IAM.
pub const IAM_SIGNING_NAME: &str = "iam";
/// The IAM Query API version.
pub const IAM_VERSION: &str = "2010-05-08";

/// Characters left as they are in a form value (RFC 3986 unreserved).
const FORM_VALUE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// An IAM user as `GetUser`/`CreateUser` return it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    /// `UserName`.
    pub name: String,
    /// `Arn`.
    pub arn: String,
}

/// One access key of a user as `ListAccessKeys` returns it (no secret: IAM never returns it
/// again after `CreateAccessKey`). `Debug` leaves the id out: snowctl never logs key ids.
#[derive(Clone, PartialEq, Eq)]
pub struct AccessKeyMetadata {
    /// `AccessKeyId`.
    pub id: String,
    /// `Status`: `Active` or `Inactive`.
    pub status: String,
}

impl fmt::Debug for AccessKeyMetadata {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AccessKeyMetadata")
            .field("status", &self.status)
            .finish_non_exhaustive()
    }
}

/// The IAM client of one device.
#[derive(Clone)]
pub struct IamClient {
    endpoint: SignedEndpoint,
}

impl fmt::Debug for IamClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IamClient")
            .field("url", &self.endpoint.url())
            .finish_non_exhaustive()
    }
}

impl IamClient {
    /// A client for `https://IP:<config.iam_port>/`.
    pub fn new(provider: DeviceCredentialsProvider, trust: &Trust, config: ClientConfig) -> Self {
        IamClient {
            endpoint: SignedEndpoint::new(
                provider,
                trust,
                config,
                Service::Iam,
                config.iam_port,
                IAM_SIGNING_NAME,
            ),
        }
    }

    /// The device.
    pub fn ip(&self) -> DeviceIp {
        self.endpoint.ip()
    }

    /// `GetUser`; `None` when the device has no such user (`NoSuchEntity`).
    pub async fn get_user(&self, name: &str) -> Result<Option<User>, DeviceError> {
        match self.call("GetUser", &[("UserName", name)]).await {
            Ok(xml) => self.user(&xml, "GetUserResult").map(Some),
            Err(err) if is_code(&err, "NoSuchEntity") => Ok(None),
            Err(err) => Err(err),
        }
    }

    /// `CreateUser`.
    pub async fn create_user(&self, name: &str) -> Result<User, DeviceError> {
        let xml = self.call("CreateUser", &[("UserName", name)]).await?;
        self.user(&xml, "CreateUserResult")
    }

    /// `GetUserPolicy`: the inline policy's document, URL-decoded (IAM returns it encoded);
    /// `None` when the user has no policy of that name.
    pub async fn get_user_policy(
        &self,
        user: &str,
        policy: &str,
    ) -> Result<Option<String>, DeviceError> {
        let params = [("UserName", user), ("PolicyName", policy)];
        let xml = match self.call("GetUserPolicy", &params).await {
            Ok(xml) => xml,
            Err(err) if is_code(&err, "NoSuchEntity") => return Ok(None),
            Err(err) => return Err(err),
        };
        let encoded = self.one(&xml, &["GetUserPolicyResult", "PolicyDocument"])?;
        percent_decode_str(&encoded)
            .decode_utf8()
            .map(|d| Some(d.into_owned()))
            .map_err(|_| {
                self.endpoint
                    .protocol("PolicyDocument is not URL-encoded UTF-8")
            })
    }

    /// `PutUserPolicy`: sets (creates or replaces) an inline policy.
    pub async fn put_user_policy(
        &self,
        user: &str,
        policy: &str,
        document: &str,
    ) -> Result<(), DeviceError> {
        let params = [
            ("UserName", user),
            ("PolicyName", policy),
            ("PolicyDocument", document),
        ];
        self.call("PutUserPolicy", &params).await.map(|_| ())
    }

    /// `ListUserPolicies`: the names of the user's inline policies, every page (at most
    /// [`MAX_PAGES`]).
    pub async fn list_user_policies(&self, user: &str) -> Result<Vec<String>, DeviceError> {
        let mut names = Vec::new();
        let mut marker: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let mut params = vec![("UserName", user)];
            if let Some(m) = &marker {
                params.push(("Marker", m.as_str()));
            }
            let xml = self.call("ListUserPolicies", &params).await?;
            names.extend(self.texts(&xml, &["ListUserPoliciesResult", "PolicyNames", "member"])?);
            marker = self.next_marker(&xml, "ListUserPoliciesResult")?;
            if marker.is_none() {
                break;
            }
        }
        Ok(names)
    }

    /// The `Marker` of the next page when `IsTruncated` is `true`.
    fn next_marker(&self, xml: &str, result: &str) -> Result<Option<String>, DeviceError> {
        let truncated = self.texts(xml, &[result, "IsTruncated"])?;
        match truncated.first().map(String::as_str) {
            Some("true") => self.one(xml, &[result, "Marker"]).map(Some),
            _ => Ok(None),
        }
    }

    /// `ListAccessKeys`, every page (at most [`MAX_PAGES`]).
    pub async fn list_access_keys(
        &self,
        user: &str,
    ) -> Result<Vec<AccessKeyMetadata>, DeviceError> {
        let mut keys = Vec::new();
        let mut marker: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let mut params = vec![("UserName", user)];
            if let Some(m) = &marker {
                params.push(("Marker", m.as_str()));
            }
            let xml = self.call("ListAccessKeys", &params).await?;
            let result = ["ListAccessKeysResult", "AccessKeyMetadata", "member"];
            let ids = self.texts(&xml, &[&result[..], &["AccessKeyId"]].concat())?;
            let statuses = self.texts(&xml, &[&result[..], &["Status"]].concat())?;
            if ids.len() != statuses.len() {
                return Err(self
                    .endpoint
                    .protocol("ListAccessKeys: a key lacks AccessKeyId or Status"));
            }
            keys.extend(
                ids.into_iter()
                    .zip(statuses)
                    .map(|(id, status)| AccessKeyMetadata { id, status }),
            );
            marker = self.next_marker(&xml, "ListAccessKeysResult")?;
            if marker.is_none() {
                break;
            }
        }
        Ok(keys)
    }

    /// `CreateAccessKey`: the new key, its secret held as a secret. Never retried: a retry after
    /// an answer that was lost would make a second key.
    pub async fn create_access_key(&self, user: &str) -> Result<AccessKey, DeviceError> {
        let xml = self
            .call_with("CreateAccessKey", &[("UserName", user)], 1)
            .await?;
        let at = ["CreateAccessKeyResult", "AccessKey"];
        let id = self.one(&xml, &[&at[..], &["AccessKeyId"]].concat())?;
        let secret = self.one(&xml, &[&at[..], &["SecretAccessKey"]].concat())?;
        if id.is_empty() || secret.is_empty() {
            return Err(self
                .endpoint
                .protocol("CreateAccessKey: AccessKeyId or SecretAccessKey is empty"));
        }
        Ok(AccessKey::new(
            SecretString::new(id),
            SecretString::new(secret),
        ))
    }

    /// `DeleteAccessKey`; `Ok(false)` when the key is already gone (`NoSuchEntity`).
    pub async fn delete_access_key(&self, user: &str, id: &str) -> Result<bool, DeviceError> {
        let params = [("UserName", user), ("AccessKeyId", id)];
        match self.call("DeleteAccessKey", &params).await {
            Ok(_) => Ok(true),
            Err(err) if is_code(&err, "NoSuchEntity") => Ok(false),
            Err(err) => Err(err),
        }
    }

    /// One action with the retry policy (throttling and 5xx); the answer's XML text.
    pub async fn call(
        &self,
        action: &str,
        params: &[(&str, &str)],
    ) -> Result<zeroize::Zeroizing<String>, DeviceError> {
        let attempts = self.endpoint.config().retry.max_attempts;
        self.call_with(action, params, attempts).await
    }

    async fn call_with(
        &self,
        action: &str,
        params: &[(&str, &str)],
        attempts: u32,
    ) -> Result<zeroize::Zeroizing<String>, DeviceError> {
        let mut body = format!("Action={action}&Version={IAM_VERSION}");
        for (name, value) in params {
            body.push_str(&format!(
                "&{name}={}",
                utf8_percent_encode(value, FORM_VALUE)
            ));
        }
        let mut retry = self.endpoint.config().retry;
        retry.max_attempts = attempts;
        retry.run(|| self.call_once(action, body.as_bytes())).await
    }

    async fn call_once(
        &self,
        action: &str,
        body: &[u8],
    ) -> Result<zeroize::Zeroizing<String>, DeviceError> {
        let answer = self
            .endpoint
            .post(
                &[(
                    "content-type",
                    "application/x-www-form-urlencoded; charset=utf-8",
                )],
                body,
            )
            .await?;
        let Ok(text) = std::str::from_utf8(&answer.body) else {
            return Err(self
                .endpoint
                .protocol(format!("{action}: the answer is not UTF-8")));
        };
        let text = zeroize::Zeroizing::new(text.to_owned());
        if (200..300).contains(&answer.status) {
            return Ok(text);
        }
        // `<ErrorResponse><Error><Code>` (IAM), `<Response><Errors><Error><Code>` (EC2 style,
        // which moto uses for some IAM errors): the first Code and Message anywhere.
        let code = first_anywhere(&text, "Code").unwrap_or_default();
        let message = first_anywhere(&text, "Message").unwrap_or_default();
        Err(self
            .endpoint
            .error(classify_service(answer.status, &code), message))
    }

    fn user(&self, xml: &str, result: &str) -> Result<User, DeviceError> {
        Ok(User {
            name: self.one(xml, &[result, "User", "UserName"])?,
            arn: self.one(xml, &[result, "User", "Arn"])?,
        })
    }

    /// The text of the one element at `path` below the root; missing is a protocol error.
    fn one(&self, xml: &str, path: &[&str]) -> Result<String, DeviceError> {
        self.texts(xml, path)?.into_iter().next().ok_or_else(|| {
            self.endpoint
                .protocol(format!("{} is missing", path.join(".")))
        })
    }

    /// The texts of every element at `path` below the root, in document order.
    fn texts(&self, xml: &str, path: &[&str]) -> Result<Vec<String>, DeviceError> {
        texts(xml, path).map_err(|e| {
            self.endpoint
                .protocol(format!("the answer is not XML: {e}"))
        })
    }
}

fn is_code(err: &DeviceError, code: &str) -> bool {
    matches!(&err.kind, ErrorKind::Service { code: c, .. } if c == code)
}

/// The texts of every element at `path` below the root element (local names), in order.
pub(crate) fn texts(xml: &str, path: &[&str]) -> Result<Vec<String>, XmlDecodeError> {
    let mut doc = Document::new(xml);
    let mut root = doc.root_element()?;
    let mut out = Vec::new();
    walk(&mut root, path, &mut out)?;
    Ok(out)
}

fn walk(
    scope: &mut ScopedDecoder<'_, '_>,
    path: &[&str],
    out: &mut Vec<String>,
) -> Result<(), XmlDecodeError> {
    let Some((first, rest)) = path.split_first() else {
        return Ok(());
    };
    while let Some(mut tag) = scope.next_tag() {
        if tag.start_el().local() != *first {
            continue;
        }
        if rest.is_empty() {
            out.push(try_data(&mut tag)?.into_owned());
        } else {
            walk(&mut tag, rest, out)?;
        }
    }
    Ok(())
}

/// The text of the first element named `name` anywhere in the document.
fn first_anywhere(xml: &str, name: &str) -> Option<String> {
    let mut doc = Document::new(xml);
    while let Some(start) = doc.next_start_element() {
        if start.local() == name {
            let mut scope = doc.scoped_to(start);
            return try_data(&mut scope).ok().map(|t| t.into_owned());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIST: &str = r#"<ListAccessKeysResponse xmlns="https://iam.amazonaws.com/doc/2010-05-08/"><ListAccessKeysResult><AccessKeyMetadata><member><UserName>eksa</UserName><AccessKeyId>AKIA1</AccessKeyId><Status>Active</Status></member><member><UserName>eksa</UserName><AccessKeyId>AKIA2</AccessKeyId><Status>Inactive</Status></member></AccessKeyMetadata><IsTruncated>false</IsTruncated></ListAccessKeysResult></ListAccessKeysResponse>"#;

    #[test]
    fn reads_the_fields_at_a_path_only() {
        let path = [
            "ListAccessKeysResult",
            "AccessKeyMetadata",
            "member",
            "AccessKeyId",
        ];
        assert_eq!(texts(LIST, &path).unwrap(), ["AKIA1", "AKIA2"]);
        assert_eq!(
            texts(LIST, &["ListAccessKeysResult", "IsTruncated"]).unwrap(),
            ["false"]
        );
        assert!(texts(LIST, &["Nothing", "Here"]).unwrap().is_empty());
        assert!(
            texts("not xml at all", &["A"])
                .unwrap_or_default()
                .is_empty()
        );
    }

    #[test]
    fn finds_the_error_code_in_both_error_shapes() {
        let iam = "<ErrorResponse><Error><Type>Sender</Type><Code>NoSuchEntity</Code><Message>The user with name x cannot be found.</Message></Error></ErrorResponse>";
        let ec2 = "<ErrorResponse><Errors><Error><Code>InvalidClientTokenId</Code><Message>invalid</Message></Error></Errors></ErrorResponse>";
        assert_eq!(first_anywhere(iam, "Code").as_deref(), Some("NoSuchEntity"));
        assert_eq!(
            first_anywhere(ec2, "Code").as_deref(),
            Some("InvalidClientTokenId")
        );
        assert_eq!(first_anywhere("<a/>", "Code"), None);
    }

    #[test]
    fn entities_are_decoded_and_key_ids_never_print() {
        let xml = "<R><GetUserPolicyResult><PolicyDocument>%7B%22a%22%3A%201%7D&amp;</PolicyDocument></GetUserPolicyResult></R>";
        assert_eq!(
            texts(xml, &["GetUserPolicyResult", "PolicyDocument"]).unwrap(),
            ["%7B%22a%22%3A%201%7D&"]
        );
        let meta = AccessKeyMetadata {
            id: "AKIAVISIBLE".into(),
            status: "Active".into(),
        };
        assert!(!format!("{meta:?}").contains("AKIAVISIBLE"));
    }
}
