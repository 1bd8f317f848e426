//! The instance metadata service (IMDSv2), for the admin instance's public IPv4: a token `PUT`,
//! then `GET /latest/meta-data/public-ipv4`. Plain HTTP/1.1 on a link-local address, as the SDK
//! does it.

use std::net::{IpAddr, SocketAddr};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Why IMDS could not tell.
#[derive(Debug, thiserror::Error)]
pub enum ImdsError {
    /// Connecting, writing or reading failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// An answer that is not HTTP or not an IP.
    #[error("unexpected answer: {0}")]
    Answer(String),
}

/// The admin instance's public IPv4; `Ok(None)` when the instance has none (HTTP 404).
pub async fn public_ipv4(imds: SocketAddr) -> Result<Option<IpAddr>, ImdsError> {
    let (status, token) = request(
        imds,
        "PUT /latest/api/token HTTP/1.1\r\nHost: {host}\r\nX-aws-ec2-metadata-token-ttl-seconds: 60\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    )
    .await?;
    if status != 200 {
        return Err(ImdsError::Answer(format!(
            "token request answered HTTP {status}"
        )));
    }
    let get = format!(
        "GET /latest/meta-data/public-ipv4 HTTP/1.1\r\nHost: {{host}}\r\nX-aws-ec2-metadata-token: {}\r\nConnection: close\r\n\r\n",
        token.trim()
    );
    let (status, body) = request(imds, &get).await?;
    match status {
        200 => body
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| ImdsError::Answer("public-ipv4 is not an IP".to_owned())),
        404 => Ok(None),
        other => Err(ImdsError::Answer(format!(
            "public-ipv4 answered HTTP {other}"
        ))),
    }
}

async fn request(imds: SocketAddr, template: &str) -> Result<(u16, String), ImdsError> {
    let mut stream = tokio::net::TcpStream::connect(imds).await?;
    let text = template.replace("{host}", &imds.to_string());
    stream.write_all(text.as_bytes()).await?;
    let mut answer = Vec::new();
    stream.take(64 * 1024).read_to_end(&mut answer).await?;
    let answer = String::from_utf8_lossy(&answer);
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse::<u16>().ok())
        .ok_or_else(|| ImdsError::Answer("not HTTP".to_owned()))?;
    Ok((status, body.to_owned()))
}
