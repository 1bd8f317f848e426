//! Helm charts taken out of an offline archive into files `helm template <file>` reads, so no
//! registry (and no mirror login) is asked for them: each chart's digest checked by
//! [`Archive::helm_chart`], written under a temporary directory removed when the
//! [`ChartFiles`] are dropped.

use crate::archive::{Archive, ArchiveError};
use snow_api::release::{Image, ReleaseInputs};
use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
};

/// Charts taken out of an archive, in a temporary directory that lives as long as this does.
#[derive(Debug)]
pub struct ChartFiles {
    /// Each chart's `.tgz`, by its URI (the bundle's `cilium.helmChart`).
    pub files: BTreeMap<String, PathBuf>,
    _dir: tempfile::TempDir,
}

/// Why charts could not be taken out.
#[derive(Debug, thiserror::Error)]
pub enum ChartsError {
    /// A chart not in the archive, not a chart, or corrupt; or the archive cannot be read.
    #[error(transparent)]
    Archive(#[from] ArchiveError),
    /// The archive's Bundles name no Cilium chart at all.
    #[error(
        "{}: its Bundles name no Cilium chart (versionsBundles[].cilium.helmChart)",
        .archive.display()
    )]
    NoCiliumChart {
        /// The archive.
        archive: PathBuf,
    },
    /// The temporary directory could not be made.
    #[error("cannot create a temporary directory: {0}")]
    TempDir(std::io::Error),
    /// A chart could not be written into it.
    #[error("cannot write into {}: {source}", .dir.display())]
    Write {
        /// The temporary directory.
        dir: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

impl ChartsError {
    /// Whether the archive is what cannot be used (rather than the local disk).
    pub fn is_input(&self) -> bool {
        matches!(
            self,
            ChartsError::Archive(_) | ChartsError::NoCiliumChart { .. }
        )
    }
}

/// `charts` taken out of `archive` as `<dir>/<n>/cilium-<tag>.tgz`.
pub fn chart_files(archive: &Archive, charts: &[&Image]) -> Result<ChartFiles, ChartsError> {
    let dir = tempfile::Builder::new()
        .prefix("snowctl-chart-")
        .tempdir()
        .map_err(ChartsError::TempDir)?;
    let mut files = BTreeMap::new();
    for (n, chart) in charts.iter().enumerate() {
        let bytes = archive.helm_chart(&chart.uri)?;
        let version = chart.tag().unwrap_or("chart");
        let file = dir.path().join(n.to_string());
        let file = std::fs::create_dir(&file)
            .map(|()| file.join(format!("cilium-{version}.tgz")))
            .and_then(|file| std::fs::write(&file, bytes).map(|()| file))
            .map_err(|source| ChartsError::Write {
                dir: dir.path().to_owned(),
                source,
            })?;
        files.insert(chart.uri.clone(), file);
    }
    Ok(ChartFiles { files, _dir: dir })
}

/// The Cilium chart of every Kubernetes version of `inputs`' Bundles that the archive at `path`
/// holds, taken out as [`chart_files`] does. An archive that holds none of them is the error
/// [`Archive::helm_chart`] gives for the first.
pub fn cilium_charts(path: &Path, inputs: &ReleaseInputs) -> Result<ChartFiles, ChartsError> {
    cilium_charts_of(&Archive::open(path)?, inputs)
}

/// [`cilium_charts`] of an archive already opened (the one the release catalog was read from).
pub fn cilium_charts_of(
    archive: &Archive,
    inputs: &ReleaseInputs,
) -> Result<ChartFiles, ChartsError> {
    let mut named: Vec<&Image> = Vec::new();
    for bundle in &inputs.bundles.spec.versions_bundles {
        if let Ok(cilium) = bundle.cilium()
            && !named.iter().any(|c| c.uri == cilium.helm_chart.uri)
        {
            named.push(&cilium.helm_chart);
        }
    }
    let held: Vec<_> = (named.iter().copied())
        .filter(|c| (archive.images().iter()).any(|i| i.name.as_deref() == Some(c.uri.as_str())))
        .collect();
    let charts = match (held.is_empty(), named.first()) {
        (false, _) => held,
        // Not in the archive: said by the archive, with what to do.
        (true, Some(first)) => vec![*first],
        (true, None) => {
            return Err(ChartsError::NoCiliumChart {
                archive: archive.path().to_owned(),
            });
        }
    };
    chart_files(archive, &charts)
}
