//! Experiment reporting: crash-safe result files, one writer per output folder, Markdown tables of mean ± std, SVG figures.
pub mod atomic;
pub mod figure;
pub mod lock;
pub mod stats;
pub mod table;

pub use atomic::{read_json, write_atomic, write_json};
pub use figure::{LegendAt, LineOpts, Series, heatmap, line_chart, small_multiples};
pub use lock::{FolderLock, LOCK_FILE, lock_folder};
pub use stats::{
    difference_phrase, fit_linear_quadratic, loglog_slope, mean_std, median, t975, welch_interval,
};
pub use table::{Better, Cell, MISSING, Table, format_mean_std};
