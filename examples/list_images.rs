//! Lists the images a Snow cluster needs, from the embedded release catalog or a Bundles file:
//! `cargo run -p snowctl-examples --example list_images -- [BUNDLES.yaml] [1.NN]`.

use snow_api::release::Bundles;
use snow_api::release::ReleaseInputs;
use snow_images::{BundleData, Selection, image_list};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    run(&args, &mut std::io::stdout())
}

/// The program, on its arguments, writing the list to `out` (`tests/examples.rs` runs it).
pub(crate) fn run(
    args: &[String],
    out: &mut dyn std::io::Write,
) -> Result<(), Box<dyn std::error::Error>> {
    let mut args = args.iter();
    let (bundle, inputs) = match args.next() {
        Some(path) => {
            let text = std::fs::read_to_string(path)?;
            let inputs = ReleaseInputs::from_bundles(Bundles::from_yaml(&text)?)?;
            (BundleData::from_yaml(&text)?, inputs)
        }
        None => {
            let inputs = ReleaseInputs::embedded()?;
            (BundleData::embedded()?, inputs)
        }
    };
    let selection = Selection {
        kube_versions: args.next().cloned().into_iter().collect(),
        os_families: vec![],
    };
    let mut list = String::new();
    for image in image_list(&bundle, &inputs.distros, &selection)? {
        list.push_str(&format!("{}  ({})\n", image.uri, image.used_by.join(", ")));
    }
    out.write_all(list.as_bytes())?;
    Ok(())
}
