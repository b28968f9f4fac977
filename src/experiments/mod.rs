//! The experiments behind the binaries: what each one runs and how it reports.
pub mod figures;
pub mod range;
pub mod reproduce;
