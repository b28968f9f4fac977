//! The experiments behind the binaries: what each one runs and how it reports.
pub mod ablate;
pub mod extrapolate;
pub mod figures;
pub mod flat_start;
pub mod init;
pub mod learned;
pub mod range;
pub mod reproduce;
