//! The local IO every library shares, so that there is one way to do each: [`process`] runs a
//! program (`helm`, `kind`, `git`) with a deadline, bounded output and secrets hidden from what a
//! failure shows; [`files`] writes a file of a library's own (0600 from the start, whole or not
//! at all, never through a link). Standard library only: no runtime, no network.

pub mod files;
pub mod process;
