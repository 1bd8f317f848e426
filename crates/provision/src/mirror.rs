//! Whether the registry mirrors clusters use answer: the mirror read from the management cluster
//! (`snow_lifecycle::mirror`) asked through `snow_images::probe`, for `describe cluster` and the
//! site view. Each distinct mirror is asked once, all at once, each within `limit`.

use snow_api::mirror::{MirrorAnswer, Silence};
use snow_images::probe::{MirrorTrust, probe_mirror};
use snow_lifecycle::RegistryMirror;
use std::{collections::BTreeMap, time::Duration};

/// What decides an answer: endpoint, port, CA, `insecureSkipVerify`.
type Key = (String, String, Option<String>, bool);

fn key(mirror: &RegistryMirror) -> Key {
    (
        mirror.endpoint.clone(),
        mirror.port.clone(),
        mirror.ca_cert_content.clone(),
        mirror.insecure_skip_verify,
    )
}

/// Asks the mirror `GET /v2/` as its spec says to trust it.
pub async fn ask(mirror: &RegistryMirror, limit: Duration) -> MirrorAnswer {
    ask_key(key(mirror), limit).await
}

async fn ask_key((endpoint, port, ca, insecure): Key, limit: Duration) -> MirrorAnswer {
    let Ok(port_number) = port.parse::<u16>() else {
        return MirrorAnswer::NotAnswering {
            reason: Silence::Unreachable {
                error: format!("port {port} is not a port number (1 to 65535)"),
            },
        };
    };
    let trust = match (&ca, insecure) {
        (_, true) => MirrorTrust::InsecureSkipVerify,
        (Some(ca), false) => MirrorTrust::Ca(ca),
        (None, false) => MirrorTrust::NoCa,
    };
    probe_mirror(&endpoint, port_number, trust, limit).await
}

/// Fills the answer of every mirror in `mirrors`, asking each distinct one once, concurrently.
pub async fn answer_all<'a>(
    mirrors: impl IntoIterator<Item = &'a mut RegistryMirror>,
    limit: Duration,
) {
    let mirrors: Vec<&mut RegistryMirror> = mirrors.into_iter().collect();
    let mut asked = tokio::task::JoinSet::new();
    let mut distinct: Vec<Key> = mirrors.iter().map(|m| key(m)).collect();
    distinct.sort();
    distinct.dedup();
    for k in distinct {
        asked.spawn(async move { (k.clone(), ask_key(k, limit).await) });
    }
    let mut answers = BTreeMap::new();
    while let Some(done) = asked.join_next().await {
        if let Ok((k, answer)) = done {
            answers.insert(k, answer);
        }
    }
    for mirror in mirrors {
        mirror.answer = answers.get(&key(mirror)).cloned();
    }
}
