//! The application: what the binaries in `experiments/` share above the `at5` library.
//! Command-line flags and their mapping onto a run's config (`cli`), multi-run plans, job lists
//! and progress (`sweep`), the experiments' plans and reports (`experiments`), and the
//! benchmark's fixtures and measurements (`bench`).
//!
//! The library below it (`crates/at5`) and the engine below that (`crates/engine`) know no
//! command line: clap and indicatif are this package's dependencies only.
pub mod bench;
pub mod cli;
pub mod experiments;
pub mod sweep;
