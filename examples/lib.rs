//! The programs are the `[[example]]` targets of this package; `tests/examples.rs` runs each of
//! them against the stand-ins.
//!
//! The library walk-through of docs/reference/library.md, as one program that must compile:
//! `tests/examples.rs` checks that that page's Rust blocks are its visible lines.
//!
//! ```no_run
//! # async fn walk_through() -> Result<(), Box<dyn std::error::Error>> {
//! let text = std::fs::read_to_string("cluster.yaml")?;
//! let report = snow_api::check(&text)?;
//! for finding in &report.findings {
//!     println!("{finding}"); // error SnowMachineConfig/edge spec.devices[1]: device … (hint: …)
//! }
//! if let Some(spec) = &report.spec {
//!     println!("{} has {} machine configs", spec.name(), spec.machine_configs.len());
//! }
//! let spec = report.into_valid().map_err(|r| format!("{} finding(s)", r.findings.len()))?;
//! let inputs = snow_api::release::ReleaseInputs::embedded()?;
//! let release = inputs.resolve(&spec, None)?; // bundle, EKS-D facts and contract, once
//! let objects = capi_render::render(&spec, &release, &capi_render::RenderOptions::default())?;
//! print!("{}", capi_render::to_yaml(&objects));
//! use snow_lifecycle::{self as lifecycle, ClusterRequest, CreateOptions, KubeconfigSource, Management};
//! // One file, or several merged as kubectl merges KUBECONFIG; `with_context` picks a context.
//! let mgmt = Management::connect(&KubeconfigSource::file("mgmt.kubeconfig")).await?;
//! let request = ClusterRequest {
//!     spec: &spec,
//!     spec_text: &text,
//!     release: &release,
//!     secrets: None, // the CAPAS identity Secret is already on the management cluster
//!     default_ssh_key_name: None,
//!     registry_credentials: None,
//! };
//! // Cluster API installs no CNI: create applies this rendered Cilium manifest.
//! let cni = lifecycle::cni::CniManifest::parse(&std::fs::read_to_string("cilium.yaml")?)?;
//! let options = CreateOptions { cni: Some(cni), ..CreateOptions::default() };
//! let created = lifecycle::create(&mgmt, &request, &options, &mut |e| eprintln!("{e}")).await?;
//! lifecycle::kubeconfig::write(std::path::Path::new("."), &created.cluster, &created.kubeconfig, false)?;
//! # Ok(())
//! # }
//! ```
