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
