//! The application: what the binaries in `experiments/` share above the `at5` library.
//! Command-line flags and their mapping onto a run's config (`cli`), multi-run plans, job lists
//! and progress (`sweep`), the experiments' plans and reports (`experiments`), and the
//! benchmark's fixtures and measurements (`bench`).
//!
//! The library below it (`crates/at5`) and the engine below that (`crates/engine`) know no
//! command line: clap and indicatif are this package's dependencies only.
pub mod bench;

/// Every binary of the application allocates through mimalloc. A training step frees and
/// reallocates the same multi-megabyte activations and gradients every time; glibc's allocator
/// hands buffers that large back to the OS and maps them again (page faults on every step),
/// which made a Process-50 paper epoch 1.33× and config B's whole-graph step 1.41× slower than
/// with mimalloc (docs/performance.md, "The allocator"). The library and the engine stay
/// allocator-agnostic, and the browser playground, which links this package, keeps wasm's.
#[cfg(not(target_arch = "wasm32"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
pub mod cli;
pub mod experiments;
pub mod sweep;
