//! The simulated source-controller: one GitRepository fetched with the real `git`.

use super::{Running, SOURCE_API_VERSION, SOURCE_MANAGER, Sim, condition, text, write_status};
use crate::store::{Key, Store};
use base64::Engine as _;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What a fetch needs, read from the store.
#[derive(Clone)]
pub(super) struct Input {
    pub(super) url: String,
    pub(super) branch: String,
    /// The referenced Secret's data, decoded (`None`: no `secretRef`).
    pub(super) secret: Option<BTreeMap<String, Vec<u8>>>,
}

/// How a fetch ended.
#[derive(Debug)]
pub(super) enum Outcome {
    /// The branch's commit, its tree at `dir` (no `.git`).
    Fetched { commit: String, dir: PathBuf },
    /// source-controller's reason and message.
    Failed {
        reason: &'static str,
        message: String,
    },
}

const AUTHENTICATION_FAILED: &str = "AuthenticationFailed";
const GIT_OPERATION_FAILED: &str = "GitOperationFailed";
const URL_INVALID: &str = "URLInvalid";

fn failed(reason: &'static str, message: String) -> Outcome {
    Outcome::Failed { reason, message }
}

/// A Secret's `data` (base64) and `stringData`, decoded.
fn secret_data(secret: &Value) -> BTreeMap<String, Vec<u8>> {
    let mut data = BTreeMap::new();
    for (k, v) in secret["data"].as_object().into_iter().flatten() {
        if let Some(bytes) = v
            .as_str()
            .and_then(|s| base64::engine::general_purpose::STANDARD.decode(s).ok())
        {
            data.insert(k.clone(), bytes);
        }
    }
    for (k, v) in secret["stringData"].as_object().into_iter().flatten() {
        if let Some(s) = v.as_str() {
            data.insert(k.clone(), s.as_bytes().to_vec());
        }
    }
    data
}

/// The fetch's input, or the failure of reading its Secret.
fn input(store: &Store, key: &Key, repository: &Value) -> Result<Input, Outcome> {
    let spec = &repository["spec"];
    let reference = &spec["ref"];
    let branch = match (text(reference, &["branch"]), text(reference, &["tag"])) {
        (_, tag) if !tag.is_empty() => tag.to_owned(),
        ("", "")
            if reference.get("commit").is_some()
                || reference.get("semver").is_some()
                || reference.get("name").is_some() =>
        {
            return Err(failed(
                GIT_OPERATION_FAILED,
                "the stand-in's source-controller follows ref.branch and ref.tag only".into(),
            ));
        }
        ("", "") => "master".to_owned(),
        (branch, _) => branch.to_owned(),
    };
    let secret = match text(spec, &["secretRef", "name"]) {
        "" => None,
        name => {
            let found = store
                .select("", "secrets", |s| {
                    text(s, &["metadata", "namespace"]) == key.2
                        && text(s, &["metadata", "name"]) == name
                })
                .into_iter()
                .next();
            match found {
                Some((_, secret)) => Some(secret_data(&secret)),
                None => {
                    return Err(failed(
                        AUTHENTICATION_FAILED,
                        format!(
                            "failed to get secret '{}/{name}': secrets \"{name}\" not found",
                            key.2
                        ),
                    ));
                }
            }
        }
    };
    Ok(Input {
        url: text(spec, &["url"]).to_owned(),
        branch,
        secret,
    })
}

/// Writes `bytes` to a new file `dir/name`, mode 0600.
fn private_file(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<PathBuf> {
    let path = dir.join(name);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)?;
    file.write_all(bytes)?;
    if !bytes.ends_with(b"\n") {
        file.write_all(b"\n")?;
    }
    Ok(path)
}

/// The lines of git's and ssh's stderr that say what went wrong (not the banners and advice).
fn cause(stderr: &str) -> String {
    let noise = [
        "Please make sure you have the correct access rights",
        "and the repository exists.",
        "Cloning into",
    ];
    let lines: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('@') && !noise.iter().any(|n| l.starts_with(n)))
        .collect();
    let telling: Vec<&str> = lines
        .iter()
        .filter(|l| {
            l.starts_with("fatal:")
                || l.starts_with("error:")
                || l.starts_with("Host key")
                || l.contains("host key is known")
                || l.contains("Permission denied")
        })
        .map(|l| {
            l.trim_start_matches("fatal: ")
                .trim_start_matches("error: ")
        })
        .collect();
    // The first line says what went wrong; ssh's verdict on a host key is worth adding.
    let verdict = "Host key verification failed.";
    let telling: Vec<&str> = match telling.first() {
        Some(first) if *first != verdict && telling.contains(&verdict) => vec![first, verdict],
        Some(first) => vec![first],
        None => Vec::new(),
    };
    match telling.is_empty() {
        false => telling.join(" "),
        true => lines.last().copied().unwrap_or("git failed").to_owned(),
    }
}

/// `url` with a user name for ssh: the URL's, else `git`, as Flux's git client logs in.
fn ssh_url(url: &str) -> String {
    let Some(rest) = url.strip_prefix("ssh://") else {
        return url.to_owned();
    };
    let authority = rest.split('/').next().unwrap_or_default();
    if authority.contains('@') {
        url.to_owned()
    } else {
        format!("ssh://git@{rest}")
    }
}

/// Fetches the input's branch into `storage/<ns>/<name>/<commit>` (blocking: runs git).
pub(super) fn fetch(input: &Input, storage: &Path, key: &Key, timeout: Duration) -> Outcome {
    let scheme = match input.url.split_once("://") {
        Some((scheme, _)) => scheme.to_owned(),
        None if input
            .url
            .split('/')
            .next()
            .is_some_and(|first| first.contains(':')) =>
        {
            return failed(
                URL_INVALID,
                format!(
                    "failed to parse url '{0}': parse \"{0}\": first path segment in URL cannot contain colon",
                    input.url
                ),
            );
        }
        None => String::new(),
    };
    let empty = BTreeMap::new();
    let data = input.secret.as_ref().unwrap_or(&empty);
    let get = |k: &str| data.get(k).filter(|v| !v.is_empty());
    let auth_error = |why: String| {
        failed(
            AUTHENTICATION_FAILED,
            format!("failed to configure authentication options: {why}"),
        )
    };
    let work = match tempfile::Builder::new()
        .prefix("fetch-")
        .tempdir_in(storage)
    {
        Ok(dir) => dir,
        Err(e) => {
            return failed(
                "DirCreationFailed",
                format!("failed to create temporary working directory: {e}"),
            );
        }
    };
    let mut env: Vec<(String, String)> = vec![
        ("GIT_TERMINAL_PROMPT".into(), "0".into()),
        ("GIT_CONFIG_NOSYSTEM".into(), "1".into()),
        ("GIT_CONFIG_GLOBAL".into(), "/dev/null".into()),
    ];
    let mut secrets: Vec<String> = Vec::new();
    let mut url = input.url.clone();
    let written = |name: &str, bytes: &[u8]| {
        private_file(work.path(), name, bytes).map_err(|e| {
            failed(
                "DirCreationFailed",
                format!("failed to write {name} to the working directory: {e}"),
            )
        })
    };
    match scheme.as_str() {
        "ssh" => {
            let host = url
                .trim_start_matches("ssh://")
                .split('/')
                .next()
                .unwrap_or_default();
            if host.rsplit('@').next().unwrap_or_default().is_empty() {
                return auth_error("invalid 'ssh' auth option: 'host' is required".into());
            }
            let Some(identity) = get("identity") else {
                return auth_error("invalid 'ssh' auth option: 'identity' is required".into());
            };
            let Some(known_hosts) = get("known_hosts") else {
                return auth_error("invalid 'ssh' auth option: 'known_hosts' is required".into());
            };
            let key_file = match written("identity", identity) {
                Ok(p) => p,
                Err(o) => return o,
            };
            let hosts_file = match written("known_hosts", known_hosts) {
                Ok(p) => p,
                Err(o) => return o,
            };
            env.push((
                "GIT_SSH_COMMAND".into(),
                format!(
                    "ssh -i '{}' -o UserKnownHostsFile='{}' -o GlobalKnownHostsFile=/dev/null -o StrictHostKeyChecking=yes -o BatchMode=yes -o IdentitiesOnly=yes -F /dev/null",
                    key_file.display(),
                    hosts_file.display()
                ),
            ));
            url = ssh_url(&url);
        }
        "http" | "https" => {
            let header = if let Some(token) = get("bearerToken") {
                let token = String::from_utf8_lossy(token).into_owned();
                secrets.push(token.clone());
                Some(format!("Authorization: Bearer {token}"))
            } else {
                let user = get("username").map(|u| String::from_utf8_lossy(u).into_owned());
                let password = get("password").map(|p| String::from_utf8_lossy(p).into_owned());
                match (user, password) {
                    (None, Some(_)) => {
                        return auth_error(format!(
                            "invalid '{scheme}' auth option: 'password' requires 'username' to be set"
                        ));
                    }
                    (Some(user), password) => {
                        let password = password.unwrap_or_default();
                        let basic = base64::engine::general_purpose::STANDARD
                            .encode(format!("{user}:{password}"));
                        if !password.is_empty() {
                            secrets.push(password);
                        }
                        secrets.push(basic.clone());
                        Some(format!("Authorization: Basic {basic}"))
                    }
                    (None, None) => None,
                }
            };
            if let Some(header) = header {
                env.push(("GIT_CONFIG_COUNT".into(), "1".into()));
                env.push(("GIT_CONFIG_KEY_0".into(), "http.extraHeader".into()));
                env.push(("GIT_CONFIG_VALUE_0".into(), header));
            }
            if let Some(ca) = get("ca.crt").or_else(|| get("caFile")) {
                match written("ca.crt", ca) {
                    Ok(p) => env.push(("GIT_SSL_CAINFO".into(), p.display().to_string())),
                    Err(o) => return o,
                }
            }
        }
        "" => return auth_error("no transport type set".into()),
        other => return auth_error(format!("unknown transport '{other}'")),
    }
    let redact = |text: &str| {
        secrets
            .iter()
            .fold(text.to_owned(), |t, s| t.replace(s.as_str(), "***"))
    };
    let shown_url = snow_api::redact::redact_userinfo(&input.url).into_owned();
    let checkout = work.path().join("checkout");
    let git = Path::new("git");
    let args: Vec<OsString> = [
        "clone",
        "--quiet",
        "--depth",
        "1",
        "--single-branch",
        "--no-tags",
        "--branch",
        &input.branch,
        "--",
        &url,
    ]
    .iter()
    .map(OsString::from)
    .chain([checkout.clone().into_os_string()])
    .collect();
    let clone = snow_io::process::Run {
        program: git,
        args: &args,
        env: &env,
        stdin: snow_io::process::Stdin::Null,
        timeout,
        max_stdout: 1 << 20,
        redact: &redact,
    };
    if let Err(failure) = clone.run() {
        let why = match failure.kind {
            snow_io::process::FailureKind::TimedOut => format!("timed out after {timeout:?}"),
            snow_io::process::FailureKind::NotFound => "the git program is not on PATH".into(),
            _ => cause(&failure.stderr),
        };
        return failed(
            GIT_OPERATION_FAILED,
            format!(
                "failed to checkout and determine revision: unable to clone '{shown_url}': {why}"
            ),
        );
    }
    let args: Vec<OsString> = vec![
        "-C".into(),
        checkout.clone().into_os_string(),
        "rev-parse".into(),
        "HEAD".into(),
    ];
    let head = snow_io::process::Run {
        program: git,
        args: &args,
        env: &env,
        stdin: snow_io::process::Stdin::Null,
        timeout,
        max_stdout: 4096,
        redact: &redact,
    };
    let commit = match head.run() {
        Ok(out) => String::from_utf8_lossy(&out).trim().to_owned(),
        Err(failure) => {
            return failed(
                GIT_OPERATION_FAILED,
                format!(
                    "failed to checkout and determine revision: {}",
                    cause(&failure.stderr)
                ),
            );
        }
    };
    let _ = std::fs::remove_dir_all(checkout.join(".git"));
    let dir = storage
        .join("gitrepository")
        .join(&key.2)
        .join(&key.3)
        .join(&commit);
    if !dir.exists() {
        let moved = dir
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::rename(&checkout, &dir));
        if let Err(e) = moved {
            return failed(
                "StorageOperationFailed",
                format!("unable to archive artifact to storage: {e}"),
            );
        }
    }
    Outcome::Fetched { commit, dir }
}

/// Fetches one GitRepository and writes its status.
pub(super) async fn reconcile(sim: &mut Sim, run: &Running, key: &Key, repository: &Value) {
    let generation = repository["metadata"]["generation"].as_i64().unwrap_or(0);
    let previous = &repository["status"];
    let read = input(&sim.shared.lock(), key, repository);
    let outcome = match read {
        Err(outcome) => outcome,
        Ok(input) => {
            let storage = sim.storage.path().to_owned();
            let timeout = sim.options.timeout;
            let key = key.clone();
            tokio::task::spawn_blocking(move || fetch(&input, &storage, &key, timeout))
                .await
                .unwrap_or_else(|e| failed(GIT_OPERATION_FAILED, format!("the fetch failed: {e}")))
        }
    };
    let mut status = json!({"observedGeneration": generation});
    let requested = text(
        repository,
        &["metadata", "annotations", super::REQUESTED_AT],
    );
    if !requested.is_empty() {
        status["lastHandledReconcileAt"] = json!(requested);
    } else if !previous["lastHandledReconcileAt"].is_null() {
        status["lastHandledReconcileAt"] = previous["lastHandledReconcileAt"].clone();
    }
    match outcome {
        Outcome::Fetched { commit, dir } => {
            let branch = match text(&repository["spec"]["ref"], &["tag"]) {
                "" => text(&repository["spec"]["ref"], &["branch"]),
                tag => tag,
            };
            let branch = if branch.is_empty() { "master" } else { branch };
            let revision = format!("{branch}@sha1:{commit}");
            sim.artifacts
                .insert((key.2.clone(), key.3.clone(), revision.clone()), dir);
            let path = format!("gitrepository/{}/{}/{commit}.tar.gz", key.2, key.3);
            let same = previous["artifact"]["revision"] == revision.as_str();
            let updated = if same {
                previous["artifact"]["lastUpdateTime"].clone()
            } else {
                json!(crate::clock::now_rfc3339())
            };
            status["artifact"] = json!({
                "revision": revision,
                "path": path,
                "url": format!("http://source-controller.{}.svc.cluster.local./{path}", run.namespace),
                "lastUpdateTime": updated,
            });
            let message = format!("stored artifact for revision '{revision}'");
            status["conditions"] = json!([
                condition(previous, "Ready", true, "Succeeded", &message, generation),
                condition(
                    previous,
                    "ArtifactInStorage",
                    true,
                    "Succeeded",
                    &message,
                    generation
                ),
            ]);
        }
        Outcome::Failed { reason, message } => {
            let mut conditions = vec![
                condition(previous, "Ready", false, reason, &message, generation),
                condition(previous, "FetchFailed", true, reason, &message, generation),
            ];
            if !previous["artifact"].is_null() {
                status["artifact"] = previous["artifact"].clone();
                let stored = previous["conditions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .find(|c| c["type"] == "ArtifactInStorage")
                    .cloned();
                conditions.extend(stored);
            }
            status["conditions"] = json!(conditions);
        }
    }
    write_status(
        &sim.shared,
        SOURCE_API_VERSION,
        "GitRepository",
        key,
        status,
        SOURCE_MANAGER,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cause_is_git_and_ssh_telling_lines() {
        let mismatch = "@@@@@@@@@@@\n@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @\nIT IS POSSIBLE THAT SOMEONE IS DOING SOMETHING NASTY!\nIt is also possible that a host key has just been changed.\nAdd correct host key in /tmp/k to get rid of this message.\nHost key for [127.0.0.1]:2222 has changed and you have requested strict checking.\nHost key verification failed.\nfatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\nand the repository exists.";
        assert_eq!(
            cause(mismatch),
            "Host key for [127.0.0.1]:2222 has changed and you have requested strict checking. Host key verification failed."
        );
        assert_eq!(
            cause("warning: x\nfatal: Remote branch nope not found in upstream origin"),
            "Remote branch nope not found in upstream origin"
        );
    }

    #[test]
    fn ssh_urls_log_in_as_git_unless_they_name_a_user() {
        assert_eq!(
            ssh_url("ssh://127.0.0.1:22/r.git"),
            "ssh://git@127.0.0.1:22/r.git"
        );
        assert_eq!(ssh_url("ssh://me@h/r.git"), "ssh://me@h/r.git");
    }
}
