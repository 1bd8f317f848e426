//! Whether a cluster's registry mirror answers: the answer of one `GET https://ENDPOINT:PORT/v2/`
//! checked against the spec's `caCertContent`, as data. `snow-images` asks the mirror
//! (`snow_images::probe`), `snow-lifecycle`'s views carry the answer beside the mirror a cluster
//! uses, and the CLI says it in words; this crate only names the cases, so that all three share
//! one type.

use serde::Serialize;

/// What the mirror answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "state")]
pub enum MirrorAnswer {
    /// It answered `GET /v2/` as a registry does: 200, or 401 (a registry asking for
    /// credentials; the nodes of a Snow cluster pull anonymously, so 401 is said).
    Answering {
        /// The HTTP status.
        status: u16,
        /// How its certificate was checked.
        trust: Trust,
    },
    /// It did not answer as a registry.
    NotAnswering {
        /// Why.
        reason: Silence,
    },
}

impl MirrorAnswer {
    /// Whether it answered as a registry.
    pub fn is_answering(&self) -> bool {
        matches!(self, MirrorAnswer::Answering { .. })
    }
}

/// How the mirror's certificate was checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Trust {
    /// Against the spec's `caCertContent` alone, as the nodes check it.
    CaCertContent,
    /// Not checked: the spec sets `insecureSkipVerify`, so the nodes do not check it either.
    InsecureSkipVerify,
    /// Not checked: the spec has no `caCertContent`, so the nodes check it against their own
    /// trusted CAs, which are not this machine's.
    NoCaCertContent,
}

/// Why the mirror did not answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "why")]
pub enum Silence {
    /// The connection was refused: nothing listens at the address.
    Refused,
    /// No answer within the time limit (a silent address, a firewall dropping packets, a
    /// server that does not finish the handshake).
    Timeout {
        /// The limit, in milliseconds.
        milliseconds: u64,
    },
    /// The address cannot be reached (no route, an unknown host name).
    Unreachable {
        /// The system's words.
        error: String,
    },
    /// The TLS handshake failed.
    Tls {
        /// What is wrong.
        problem: TlsProblem,
    },
    /// It speaks HTTPS, but `GET /v2/` answered with a status a registry does not give.
    NotARegistry {
        /// The HTTP status.
        status: u16,
    },
    /// The HTTP exchange after the handshake failed (the server closed the connection, sent
    /// something that is not HTTP).
    Http {
        /// What went wrong.
        error: String,
    },
    /// The spec's `caCertContent` holds no PEM certificate, so nothing can be checked against it
    /// (the mirror is not asked).
    BadCaCertContent {
        /// What is wrong with it.
        problem: String,
    },
}

/// What is wrong in a failed TLS handshake.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "problem")]
pub enum TlsProblem {
    /// The certificate is not signed by the spec's `caCertContent`.
    UnknownIssuer,
    /// The certificate does not name the endpoint (an IP endpoint needs an IP SAN).
    NotValidForName {
        /// The endpoint the nodes ask for.
        expected: String,
        /// The names the certificate holds, when known.
        presented: Vec<String>,
    },
    /// The certificate has expired.
    Expired,
    /// The certificate is not valid yet (a clock behind, or a certificate from the future).
    NotValidYet,
    /// The peer does not speak TLS (a plain-HTTP server?).
    NotTls,
    /// Another certificate or handshake problem, in rustls' words.
    Other {
        /// rustls' words.
        error: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_serialize_with_their_case_named() {
        let answering = MirrorAnswer::Answering {
            status: 200,
            trust: Trust::CaCertContent,
        };
        assert!(answering.is_answering());
        assert_eq!(
            serde_json::to_value(&answering).unwrap(),
            serde_json::json!({"state": "answering", "status": 200, "trust": "caCertContent"})
        );
        let refused = MirrorAnswer::NotAnswering {
            reason: Silence::Tls {
                problem: TlsProblem::UnknownIssuer,
            },
        };
        assert!(!refused.is_answering());
        assert_eq!(
            serde_json::to_value(&refused).unwrap(),
            serde_json::json!({"state": "notAnswering", "reason": {"why": "tls", "problem": {"problem": "unknownIssuer"}}})
        );
    }
}
