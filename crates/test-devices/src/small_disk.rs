//! A small filesystem that really fills up: a tmpfs of a few hundred KiB mounted on a fresh
//! directory, so a write past its size gets ENOSPC from the kernel (not a simulated error).
//! Mounting takes root (CI runs as root); without it the test fails and says so.

use std::{path::Path, process::Command};

/// A mounted tmpfs, unmounted on drop.
pub struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    /// Mounts a tmpfs of `kib` KiB; panics (the test fails, saying why) when mounting is refused.
    pub fn mount(kib: u64) -> SmallDisk {
        let dir = tempfile::tempdir().unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={kib}k"), "snowctl-test"])
            .arg(dir.path())
            .output();
        match out {
            Ok(o) if o.status.success() => SmallDisk { dir },
            Ok(o) => panic!(
                "this test fills a small filesystem and needs to mount a tmpfs, which takes root (CI runs as root): `mount -t tmpfs` said: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            ),
            Err(e) => panic!("this test needs `mount` (util-linux) to mount a tmpfs: {e}"),
        }
    }

    /// Gives the filesystem more room (its content stays).
    pub fn grow(&self, kib: u64) {
        let out = Command::new("mount")
            .args(["-o", &format!("remount,size={kib}k")])
            .arg(self.dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "remount: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Where it is mounted.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}
