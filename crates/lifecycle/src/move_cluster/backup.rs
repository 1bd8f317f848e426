//! Backup and restore: a cluster's graph as one YAML file per object, and back.

use super::{
    Graph, Kind, MoveOptions, Moved, Node, copy, graph, patch, paused_by_move, target_kinds,
    unpause_patch,
};
use crate::{Event, LifecycleError, Management, error::chain};
use serde_json::Value;
use std::{
    collections::BTreeSet,
    path::{Path, PathBuf},
};

/// The file of an object in a backup directory.
fn file_name(kind: &str, namespace: &str, name: &str) -> String {
    format!("{kind}_{namespace}_{name}.yaml")
}

pub(super) fn write_directory(
    graph: &Graph,
    dir: &Path,
    on_event: &mut dyn FnMut(Event),
) -> Result<usize, LifecycleError> {
    let failed = |path: &Path, e: &dyn std::error::Error| LifecycleError::Write {
        path: path.to_owned(),
        reason: chain(e),
    };
    std::fs::create_dir_all(dir).map_err(|e| failed(dir, &e))?;
    let mut written = 0;
    for node in graph.nodes() {
        let kind = &graph.kinds[node.kind];
        let mut object = node.object.clone();
        if let Some(meta) = object["metadata"].as_object_mut() {
            meta.remove("managedFields");
            meta.remove("resourceVersion");
        }
        let text = serde_saphyr::to_string(&object).map_err(|e| LifecycleError::Write {
            path: dir.to_owned(),
            reason: e.to_string(),
        })?;
        let path = dir.join(file_name(&kind.kind, node.namespace(), node.name()));
        crate::files::replace(&path, |f| std::io::Write::write_all(f, text.as_bytes()))
            .map_err(|e| failed(&path, &e))?;
        written += 1;
        on_event(Event::Applied {
            object: path.display().to_string(),
        });
    }
    Ok(written)
}

/// The objects of a backup directory: every `*.yaml` file, one object each, sorted by name.
fn read_directory(dir: &Path) -> Result<Vec<(PathBuf, Value)>, LifecycleError> {
    let bad = |path: &Path, reason: String| LifecycleError::Backup {
        path: path.to_owned(),
        reason,
    };
    let entries = std::fs::read_dir(dir).map_err(|e| bad(dir, e.to_string()))?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml") && p.is_file())
        .collect();
    paths.sort();
    let mut objects = Vec::new();
    let mut problems = Vec::new();
    for path in paths {
        let text = match read_limited(&path) {
            Ok(text) => text,
            Err(e) => {
                problems.push(format!("{}: {e}", path.display()));
                continue;
            }
        };
        match serde_saphyr::from_str::<Value>(&text) {
            Ok(object) => {
                let meta = &object["metadata"];
                let missing: Vec<&str> = [
                    ("apiVersion", object["apiVersion"].is_string()),
                    ("kind", object["kind"].is_string()),
                    ("metadata.name", meta["name"].is_string()),
                    ("metadata.namespace", meta["namespace"].is_string()),
                    ("metadata.uid", meta["uid"].is_string()),
                ]
                .into_iter()
                .filter(|(_, ok)| !ok)
                .map(|(f, _)| f)
                .collect();
                if missing.is_empty() {
                    objects.push((path, object));
                } else {
                    problems.push(format!(
                        "{}: not an object of a backup (missing {})",
                        path.display(),
                        missing.join(", ")
                    ));
                }
            }
            Err(e) => problems.push(format!("{}: {e}", path.display())),
        }
    }
    if !problems.is_empty() {
        return Err(bad(dir, problems.join("\n  - ")));
    }
    if objects.is_empty() {
        return Err(bad(dir, "no *.yaml object files in the directory".into()));
    }
    Ok(objects)
}

/// A backup file, refused past 64 MiB (no object of a cluster is near that).
fn read_limited(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    const LIMIT: u64 = 64 << 20;
    let mut text = String::new();
    let file = std::fs::File::open(path)?;
    file.take(LIMIT + 1).read_to_string(&mut text)?;
    if text.len() as u64 > LIMIT {
        return Err(std::io::Error::other("larger than 64 MiB"));
    }
    Ok(text)
}

/// Restores a backup written by [`move_cluster`] to a directory onto `to`: objects created (or
/// matched) level by level with their status, then every Cluster the backup paused unpaused.
pub async fn restore(
    dir: &Path,
    to: &Management,
    options: &MoveOptions,
    on_event: &mut dyn FnMut(Event),
) -> Result<Moved, LifecycleError> {
    on_event(Event::Step(format!(
        "Reading the backup in {}",
        dir.display()
    )));
    let objects = read_directory(dir)?;
    let wanted: BTreeSet<(String, String)> = objects
        .iter()
        .map(|(_, o)| {
            let text = |k: &str| o[k].as_str().unwrap_or_default().to_owned();
            (text("apiVersion"), text("kind"))
        })
        .collect();
    let (found, missing) = target_kinds(to, &wanted).await?;
    if !missing.is_empty() {
        return Err(LifecycleError::MoveRefused {
            cluster: dir.display().to_string(),
            reasons: missing,
        });
    }
    let mut kinds: Vec<Kind> = Vec::new();
    let mut nodes = Vec::new();
    let all_uids: BTreeSet<String> = objects
        .iter()
        .filter_map(|(_, o)| o["metadata"]["uid"].as_str().map(str::to_owned))
        .collect();
    for (_, object) in objects {
        let key = (
            object["apiVersion"].as_str().unwrap_or_default().to_owned(),
            object["kind"].as_str().unwrap_or_default().to_owned(),
        );
        let Some(kind) = found.get(&key) else {
            continue;
        };
        let index = match kinds.iter().position(|k| k == kind) {
            Some(i) => i,
            None => {
                kinds.push(kind.clone());
                kinds.len() - 1
            }
        };
        let owners = object["metadata"]["ownerReferences"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r["uid"].as_str())
            .filter(|u| all_uids.contains(*u))
            .map(str::to_owned)
            .collect();
        nodes.push(Node {
            kind: index,
            uid: object["metadata"]["uid"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            object,
            owners,
        });
    }
    let graph = Graph {
        levels: graph::levels(nodes),
        kinds,
    };
    on_event(Event::Step(format!(
        "Creating {} objects on the target ({} levels)",
        graph.len(),
        graph.levels.len()
    )));
    let moved = copy(to, &graph, &found, options, on_event).await?;
    for node in graph.nodes() {
        let kind = &graph.kinds[node.kind];
        if kind.kind == "Cluster"
            && kind.group() == "cluster.x-k8s.io"
            && paused_by_move(&node.object)
        {
            on_event(Event::Step(format!("Unpausing cluster {}", node.name())));
            patch(
                to,
                kind,
                node.namespace(),
                node.name(),
                &unpause_patch(&node.object),
            )
            .await?;
        }
    }
    Ok(moved)
}

/// A backup written before an upgrade ([`backup_before_upgrade`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backup {
    /// The cluster.
    pub cluster: String,
    /// The new directory holding it: give it to [`restore`] (`snowctl move cluster
    /// --from-directory`).
    pub dir: PathBuf,
    /// What was written.
    pub moved: Moved,
}

/// How many directories of one second a backup tries (`…-backup-<time>`, then `-2` to `-99`)
/// before giving up: far more upgrades than one second holds.
const MAX_SAME_SECOND: u32 = 99;

/// Makes the backup directory of `cluster` under `root`: `<root>/<cluster>/<cluster>-backup-<UTC
/// time>` (the folder `create cluster` writes the cluster's kubeconfig in), created exclusively,
/// so a backup never lands in a directory that was there (nor one a link points to): a name that
/// exists, a link included, is passed over for the next (`-2`, `-3`, …).
pub(crate) fn new_backup_dir(
    root: &Path,
    cluster: &str,
    stamp: &str,
) -> Result<PathBuf, LifecycleError> {
    let failed = |path: &Path, e: &std::io::Error| LifecycleError::Write {
        path: path.to_owned(),
        reason: e.to_string(),
    };
    let parent = crate::files::make_dirs(root, Path::new(cluster))
        .map_err(|e| failed(&root.join(cluster), &e))?;
    for n in 1..=MAX_SAME_SECOND {
        let name = match n {
            1 => format!("{cluster}-backup-{stamp}"),
            n => format!("{cluster}-backup-{stamp}-{n}"),
        };
        let dir = parent.join(name);
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(failed(&dir, &e)),
        }
    }
    Err(LifecycleError::Write {
        path: parent.clone(),
        reason: format!("{MAX_SAME_SECOND} backups of {cluster} for {stamp} are there already"),
    })
}

/// Now in UTC as a directory-name stamp, `2026-01-02T03-04-05Z` (no `:`, which some file
/// systems and tools refuse).
pub(crate) fn backup_stamp() -> String {
    k8s_openapi::jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H-%M-%SZ")
        .to_string()
}

/// Backs `cluster` up before an upgrade, as `move_cluster` to a directory does, into a new
/// directory ([`new_backup_dir`]) under `root`. A directory left empty by a failed backup is
/// removed.
pub async fn backup_before_upgrade(
    from: &Management,
    cluster: &str,
    root: &Path,
    options: &MoveOptions,
    on_event: &mut dyn FnMut(Event),
) -> Result<Backup, LifecycleError> {
    write_backup(from, cluster, root, options, on_event)
        .await
        .map_err(|e| LifecycleError::BackupFailed {
            cluster: cluster.to_owned(),
            cause: Box::new(e),
        })
}

async fn write_backup(
    from: &Management,
    cluster: &str,
    root: &Path,
    options: &MoveOptions,
    on_event: &mut dyn FnMut(Event),
) -> Result<Backup, LifecycleError> {
    let dir = new_backup_dir(root, cluster, &backup_stamp())?;
    on_event(Event::Step(format!(
        "Backing up cluster {cluster} to {}",
        dir.display()
    )));
    match super::move_cluster(
        from,
        cluster,
        super::Destination::Directory(&dir),
        options,
        on_event,
    )
    .await
    {
        Ok(moved) => Ok(Backup {
            cluster: cluster.to_owned(),
            dir,
            moved,
        }),
        Err(e) => {
            // Only an empty directory goes; files already written stay for a look.
            let _ = std::fs::remove_dir(&dir);
            Err(e)
        }
    }
}

/// Backs up, before the management components are upgraded, every cluster snowctl manages on
/// `from` (each cluster with a snowctl inventory ConfigMap in `eksa-system`), one
/// [`backup_before_upgrade`] each, in name order. Components that misbehave after an upgrade can
/// stop reconciling or damage the clusters' objects; these are what a restore onto a fresh
/// management cluster needs (the components themselves come back from their release with `init`).
pub async fn backup_all_before_upgrade(
    from: &Management,
    root: &Path,
    options: &MoveOptions,
    on_event: &mut dyn FnMut(Event),
) -> Result<Vec<Backup>, LifecycleError> {
    let mut clusters: Vec<String> = crate::Inventory::load_all(from)
        .await?
        .into_iter()
        .map(|inventory| inventory.cluster)
        .collect();
    clusters.sort();
    clusters.dedup();
    let mut written = Vec::new();
    for cluster in clusters {
        written.push(backup_before_upgrade(from, &cluster, root, options, on_event).await?);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_backup_gets_a_new_directory_and_a_link_is_passed_over() {
        let root = tempfile::tempdir().unwrap();
        let first = new_backup_dir(root.path(), "edge", "T").unwrap();
        assert_eq!(first, root.path().join("edge/edge-backup-T"));
        let second = new_backup_dir(root.path(), "edge", "T").unwrap();
        assert_eq!(second, root.path().join("edge/edge-backup-T-2"));
        let elsewhere = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), root.path().join("edge/edge-backup-T-3"))
            .unwrap();
        let third = new_backup_dir(root.path(), "edge", "T").unwrap();
        assert_eq!(third, root.path().join("edge/edge-backup-T-4"));
        assert!(
            std::fs::read_dir(elsewhere.path())
                .unwrap()
                .next()
                .is_none()
        );
    }

    #[test]
    fn a_linked_cluster_folder_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), root.path().join("edge")).unwrap();
        let err = new_backup_dir(root.path(), "edge", "T").unwrap_err();
        assert!(err.to_string().contains("link"), "{err}");
        assert!(
            std::fs::read_dir(elsewhere.path())
                .unwrap()
                .next()
                .is_none()
        );
    }

    #[test]
    fn the_stamp_has_no_colon() {
        let stamp = backup_stamp();
        assert_eq!(stamp.len(), "2026-01-02T03-04-05Z".len(), "{stamp}");
        assert!(!stamp.contains(':'));
    }
}
