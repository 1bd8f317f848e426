//! `snowctl build controller-image --output-file FILE`: the controller's container image, built from this
//! snowctl executable (`snow_images::controller_image`), so the image's tag and the executable
//! in it are always the same version.

use crate::{
    args::BuildControllerImageArgs,
    exit::{self, Outcome},
    output::Io,
};
use snow_images::controller_image::{
    ControllerImageInputs, ImageBuildError, build_controller_image,
};
use std::process::ExitCode;

/// Runs `snowctl build controller-image`: prints `NAME DIGEST` on stdout, the archive on stderr.
pub fn controller_image(args: &BuildControllerImageArgs, io: &mut Io<'_>) -> Outcome {
    let binary = std::env::current_exe()
        .map_err(|e| exit::failed(io, format_args!("cannot find this snowctl executable: {e}")))?;
    let inputs = ControllerImageInputs {
        binary,
        ca_certificates: args.ca_certificates.clone(),
    };
    let built =
        exit::runtime(io, false)?.block_on(build_controller_image(&inputs, &args.output_file));
    let built = built.map_err(|e| match e {
        ImageBuildError::NotStatic { .. } | ImageBuildError::Write { .. } => exit::failed(io, e),
        _ => exit::usage(io, e),
    })?;
    io.progress(&format!(
        "Wrote {} ({} bytes; layer {})\n",
        built.path.display(),
        built.bytes,
        built.layer_digest
    ));
    io.out(&format!("{} {}\n", built.name, built.digest));
    Ok(ExitCode::SUCCESS)
}
