//! OCI image layouts written by hand into a directory (`oci-layout`, `index.json`,
//! `blobs/sha256/…`), for the archive tests: shapes no tool writes (an index of an index, names
//! with control characters) as easily as the usual ones. `snowctl import-images --from DIR`
//! reads such a directory as it reads the archive.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// The OCI image manifest media type.
pub const MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
/// The OCI image index media type.
pub const INDEX: &str = "application/vnd.oci.image.index.v1+json";

/// A descriptor of something written: digest, size and media type.
#[derive(Debug, Clone)]
pub struct Written {
    /// `sha256:…`.
    pub digest: String,
    /// Bytes.
    pub size: usize,
    /// Media type.
    pub media_type: String,
}

impl Written {
    /// As an entry of an index (with `platform` when given).
    pub fn descriptor(&self, platform: Option<(&str, &str)>) -> Value {
        let mut d = json!({"mediaType": self.media_type, "digest": self.digest, "size": self.size});
        if let Some((os, arch)) = platform {
            d["platform"] = json!({"os": os, "architecture": arch});
        }
        d
    }
}

/// A layout being written into a directory; [`Layout::finish`] writes `index.json`.
pub struct Layout {
    root: PathBuf,
    named: Vec<Value>,
}

impl Layout {
    /// Starts a layout in `root` (created).
    pub fn new(root: &Path) -> Layout {
        std::fs::create_dir_all(root.join("blobs/sha256")).unwrap();
        std::fs::write(root.join("oci-layout"), r#"{"imageLayoutVersion":"1.0.0"}"#).unwrap();
        Layout {
            root: root.to_owned(),
            named: Vec::new(),
        }
    }

    /// Writes a blob of `media_type`.
    pub fn blob(&self, bytes: &[u8], media_type: &str) -> Written {
        let digest = crate::registry::sha256(bytes);
        let hex = digest.trim_start_matches("sha256:");
        std::fs::write(self.root.join("blobs/sha256").join(hex), bytes).unwrap();
        Written {
            digest,
            size: bytes.len(),
            media_type: media_type.to_owned(),
        }
    }

    /// Writes an image of one uncompressed layer for `arch` (config, layer, manifest).
    pub fn image(&self, arch: &str, layer: &[u8]) -> Written {
        let layer = self.blob(layer, "application/vnd.oci.image.layer.v1.tar");
        let config = json!({
            "architecture": arch,
            "os": "linux",
            "rootfs": {"type": "layers", "diff_ids": [layer.digest]},
            "config": {},
        });
        let config = self.blob(
            config.to_string().as_bytes(),
            "application/vnd.oci.image.config.v1+json",
        );
        let manifest = json!({
            "schemaVersion": 2,
            "mediaType": MANIFEST,
            "config": config.descriptor(None),
            "layers": [layer.descriptor(None)],
        });
        self.blob(manifest.to_string().as_bytes(), MANIFEST)
    }

    /// Writes an index of `entries` (descriptors, see [`Written::descriptor`]).
    pub fn index(&self, entries: Vec<Value>) -> Written {
        let index = json!({"schemaVersion": 2, "mediaType": INDEX, "manifests": entries});
        self.blob(index.to_string().as_bytes(), INDEX)
    }

    /// Names `what` in `index.json` (`org.opencontainers.image.ref.name`).
    pub fn name(&mut self, what: &Written, name: &str) {
        let mut d = what.descriptor(None);
        d["annotations"] = json!({"org.opencontainers.image.ref.name": name});
        self.named.push(d);
    }

    /// Writes `index.json`; returns the layout's directory.
    pub fn finish(self) -> PathBuf {
        let index = json!({"schemaVersion": 2, "mediaType": INDEX, "manifests": self.named});
        std::fs::write(self.root.join("index.json"), index.to_string()).unwrap();
        self.root
    }
}
