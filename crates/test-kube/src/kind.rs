//! `kind` and `docker` standing in for the real ones where neither installs (kind runs its nodes
//! as docker containers): a `kind` script as strict about its state as kind — `create cluster`
//! of a name it lists fails as kind's does, `delete cluster` of an absent one succeeds as kind's
//! does — that records every call and, on `create cluster` (and `export kubeconfig`), writes the
//! kubeconfig it was given, a Kubernetes API stand-in's, where kind would write the new cluster's.
//! `docker` only exits 0: kind's callers check it is there.

use std::{
    os::unix::fs::PermissionsExt,
    path::{Path, PathBuf},
};

const SCRIPT: &str = r#"#!/bin/sh
state="$FAKE_DIR/clusters"
for a in "$@"; do printf '%s\n' "$a" >> "$FAKE_DIR/log"; done
echo --- >> "$FAKE_DIR/log"
name=""; kubeconfig=""; config=""; image=""
shift 2
while [ $# -gt 0 ]; do
  case "$1" in
    --name) name="$2"; shift 2 ;;
    --kubeconfig) kubeconfig="$2"; shift 2 ;;
    --config) config="$2"; shift 2 ;;
    --image) image="$2"; shift 2 ;;
    *) echo "ERROR: unknown flag $1" >&2; exit 1 ;;
  esac
done
case "$CMD" in
  "get clusters")
    if [ -s "$state" ]; then cat "$state"; else echo "No kind clusters found." >&2; fi ;;
  "create cluster")
    if [ -f "$FAKE_DIR/fail" ]; then cat "$FAKE_DIR/fail" >&2; exit 1; fi
    if grep -qx "$name" "$state" 2>/dev/null; then
      echo "ERROR: failed to create cluster: node(s) already exist for a cluster with the name \"$name\"" >&2; exit 1
    fi
    [ -n "$image" ] || { echo "ERROR: no image" >&2; exit 1; }
    cp "$config" "$FAKE_DIR/config.seen" || exit 1
    cp "$FAKE_DIR/stand-in.kubeconfig" "$kubeconfig" || exit 1
    echo "$name" >> "$state" ;;
  "export kubeconfig")
    grep -qx "$name" "$state" || { echo "ERROR: unknown cluster" >&2; exit 1; }
    cp "$FAKE_DIR/stand-in.kubeconfig" "$kubeconfig" ;;
  "delete cluster")
    grep -vx "$name" "$state" > "$state.new" 2>/dev/null; mv "$state.new" "$state" ;;
  *) echo "ERROR: unknown command $CMD" >&2; exit 1 ;;
esac
"#;

/// A directory with `bin/kind` and `bin/docker` and the fake's state (`clusters`, `log`, the
/// last `config.seen`; a file `fail` makes `create cluster` fail with its text). Removed when
/// dropped.
#[derive(Debug)]
pub struct FakeKind {
    dir: tempfile::TempDir,
}

impl FakeKind {
    /// A fake whose clusters are the cluster of `kubeconfig`.
    pub fn new(kubeconfig: &str) -> std::io::Result<FakeKind> {
        let dir = tempfile::tempdir()?;
        std::fs::write(dir.path().join("stand-in.kubeconfig"), kubeconfig)?;
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin)?;
        // The script learns its directory and command from lines prepended here.
        let script = SCRIPT.replacen(
            "#!/bin/sh\n",
            &format!(
                "#!/bin/sh\nFAKE_DIR='{}'\nCMD=\"$1 $2\"\n",
                dir.path().display()
            ),
            1,
        );
        executable(&bin.join("kind"), &script)?;
        executable(&bin.join("docker"), "#!/bin/sh\nexit 0\n")?;
        Ok(FakeKind { dir })
    }

    /// `name` in the fake's directory.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The directory holding `kind` and `docker` (for `PATH`).
    pub fn bin(&self) -> PathBuf {
        self.path("bin")
    }

    /// The recorded invocations, one argument list each.
    pub fn calls(&self) -> Vec<Vec<String>> {
        let log = std::fs::read_to_string(self.path("log")).unwrap_or_default();
        log.split("---\n")
            .filter(|c| !c.is_empty())
            .map(|c| c.lines().map(str::to_owned).collect())
            .collect()
    }
}

fn executable(path: &Path, text: &str) -> std::io::Result<()> {
    std::fs::write(path, text)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
}
