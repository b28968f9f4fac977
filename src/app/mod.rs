//! The application layer: what the binaries share above the library. Command-line flags and
//! their mapping onto a run's config (`cli`), multi-run plans, job lists and progress
//! (`sweep`), the experiments' plans and reports (`experiments`), and the benchmark's fixtures
//! and measurements (`bench`).
//!
//! It lives behind the default `cli` feature rather than in a second crate so that the
//! binaries, the tests and the browser binding keep one package and one set of paths
//! (`at5::cli`, `at5::sweep`, `at5::experiments` are re-exported from here); with
//! `--no-default-features` the library (engine, model, biases, data, training, reports)
//! builds without clap or indicatif, which `.ci/run` checks.
pub mod bench;
pub mod cli;
pub mod experiments;
pub mod sweep;
