//! A Markdown table builder that bolds the best cell per row, and `mean ± std` cells.

use super::stats::mean_std;

/// What a missing or non-finite cell prints as, so gaps are visible rather than blank.
pub const MISSING: &str = "—";

/// `mean ± std` with `digits` decimals, e.g. `93.1 ± 0.4`.
///
/// A non-finite mean prints as [`MISSING`]; a non-finite std prints the mean alone.
pub fn format_mean_std(mean: f64, std: f64, digits: usize) -> String {
    if !mean.is_finite() {
        MISSING.to_string()
    } else if !std.is_finite() {
        format!("{mean:.digits$}")
    } else {
        format!("{mean:.digits$} ± {std:.digits$}")
    }
}

/// Which way a table's rows are ranked when bolding the best cell.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Better {
    /// No cell is bold.
    #[default]
    Neither,
    /// The largest mean is best (accuracy).
    Higher,
    /// The smallest mean is best (loss, error rate).
    Lower,
}

/// One cell of a compared column.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    /// A mean and standard deviation over seeds, printed as `mean ± std`.
    Stat(f64, f64),
    /// No result (not run, or diverged to NaN), printed as [`MISSING`].
    Missing,
    /// Free text, printed as given and never bold (e.g. `n/a`, `OOM`).
    Text(String),
}

impl Cell {
    /// The cell of a result over seeds: `mean ± std`, the value alone for one seed (its spread
    /// is not observed, and `± 0.0` would claim it is none), [`Cell::Missing`] for none.
    pub fn of_samples(xs: &[f64]) -> Cell {
        match xs {
            [] => Cell::Missing,
            [x] => Cell::Stat(*x, f64::NAN),
            _ => {
                let (m, s) = mean_std(xs);
                Cell::Stat(m, s)
            }
        }
    }
}

impl From<(f64, f64)> for Cell {
    fn from((mean, std): (f64, f64)) -> Self {
        Cell::Stat(mean, std)
    }
}

impl From<Option<(f64, f64)>> for Cell {
    fn from(v: Option<(f64, f64)>) -> Self {
        v.map_or(Cell::Missing, Cell::from)
    }
}

impl From<&str> for Cell {
    fn from(text: &str) -> Self {
        Cell::Text(text.to_string())
    }
}

impl From<String> for Cell {
    fn from(text: String) -> Self {
        Cell::Text(text)
    }
}

#[derive(Clone, Debug, PartialEq)]
struct Row {
    label: String,
    cells: Vec<Cell>,
    extras: Vec<String>,
}

/// A Markdown results table: a label column, compared columns of `mean ± std` cells (the best
/// per row optionally bold), then free-text extra columns (e.g. a Bayes ceiling) that are never
/// compared.
///
/// ```
/// use at5::report::{Better, Table};
/// let mut t = Table::new("Task", ["T5", "AT5"], 1).bold_best(Better::Higher);
/// t.row("copy", [Some((93.1, 0.4)), Some((95.0, 0.2))]);
/// assert!(t.to_markdown().contains("**95.0 ± 0.2**"));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    label_header: String,
    columns: Vec<String>,
    extra_columns: Vec<String>,
    better: Better,
    digits: usize,
    rows: Vec<Row>,
}

impl Table {
    /// A table whose compared columns print with `digits` decimals. Nothing is bold until
    /// [`Table::bold_best`] says which direction is better.
    pub fn new<S: Into<String>>(
        label_header: impl Into<String>,
        columns: impl IntoIterator<Item = S>,
        digits: usize,
    ) -> Self {
        Table {
            label_header: label_header.into(),
            columns: columns.into_iter().map(Into::into).collect(),
            extra_columns: Vec::new(),
            better: Better::Neither,
            digits,
            rows: Vec::new(),
        }
    }

    /// Bolds the best [`Cell::Stat`] of each row in this direction.
    pub fn bold_best(mut self, better: Better) -> Self {
        self.better = better;
        self
    }

    /// Adds a free-text column after the compared ones; it takes no part in the bolding.
    pub fn extra_column(mut self, header: impl Into<String>) -> Self {
        self.extra_columns.push(header.into());
        self
    }

    /// Appends a row with one cell per compared column; its extra columns print as [`MISSING`].
    ///
    /// # Panics
    /// If the number of cells differs from the number of compared columns: a shifted row would
    /// put results under the wrong heading, so gaps must be explicit [`Cell::Missing`].
    pub fn row<C: Into<Cell>>(
        &mut self,
        label: impl Into<String>,
        cells: impl IntoIterator<Item = C>,
    ) -> &mut Self {
        self.row_with_extras(label, cells, Vec::<String>::new())
    }

    /// Appends a row with one cell per compared column and up to one text per extra column
    /// (absent trailing extras print as [`MISSING`]).
    ///
    /// # Panics
    /// If the cell count differs from the compared columns, or there are more extras than extra
    /// columns.
    pub fn row_with_extras<C: Into<Cell>, S: Into<String>>(
        &mut self,
        label: impl Into<String>,
        cells: impl IntoIterator<Item = C>,
        extras: impl IntoIterator<Item = S>,
    ) -> &mut Self {
        let label = label.into();
        let cells: Vec<Cell> = cells.into_iter().map(Into::into).collect();
        let extras: Vec<String> = extras.into_iter().map(Into::into).collect();
        assert_eq!(
            cells.len(),
            self.columns.len(),
            "Table row {label:?}: {} cells for {} columns",
            cells.len(),
            self.columns.len()
        );
        assert!(
            extras.len() <= self.extra_columns.len(),
            "Table row {label:?}: {} extras for {} extra columns",
            extras.len(),
            self.extra_columns.len()
        );
        self.rows.push(Row {
            label,
            cells,
            extras,
        });
        self
    }

    /// Which cells of `cells` are bold. Means are compared as printed (rounded to `digits`), so
    /// two results a reader cannot tell apart are both bold; NaN means count as missing.
    fn best_mask(&self, cells: &[Cell]) -> Vec<bool> {
        // Beyond f64's ~15 significant digits rounding changes nothing but can overflow.
        let scale = 10f64.powi(self.digits.min(15) as i32);
        let key = |c: &Cell| match c {
            Cell::Stat(m, _) if m.is_finite() => Some((m * scale).round()),
            _ => None,
        };
        let pick = |a: f64, b: f64| match self.better {
            Better::Higher => a.max(b),
            _ => a.min(b),
        };
        let best = match self.better {
            Better::Neither => None,
            _ => cells.iter().filter_map(key).reduce(pick),
        };
        cells
            .iter()
            .map(|c| best.is_some() && key(c) == best)
            .collect()
    }

    fn render_cell(&self, cell: &Cell, bold: bool) -> String {
        match cell {
            Cell::Stat(m, s) => {
                let text = format_mean_std(*m, *s, self.digits);
                if bold && text != MISSING {
                    format!("**{text}**")
                } else {
                    text
                }
            }
            Cell::Missing => MISSING.to_string(),
            Cell::Text(t) if t.is_empty() => MISSING.to_string(),
            Cell::Text(t) => t.clone(),
        }
    }

    /// The table as GitHub-flavoured Markdown, every column padded to one width so the pipes line
    /// up in the source too. The label column is left-aligned, the others right-aligned. Ends
    /// with a newline.
    pub fn to_markdown(&self) -> String {
        // Pipes inside a cell would split it into two.
        let esc = |s: &str| s.replace('|', "\\|");
        let header: Vec<String> = std::iter::once(&self.label_header)
            .chain(&self.columns)
            .chain(&self.extra_columns)
            .map(|s| esc(s))
            .collect();
        let body: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|row| {
                let mask = self.best_mask(&row.cells);
                let mut line = vec![esc(&row.label)];
                line.extend(
                    row.cells
                        .iter()
                        .zip(mask)
                        .map(|(c, b)| esc(&self.render_cell(c, b))),
                );
                line.extend(
                    (0..self.extra_columns.len()).map(|i| match row.extras.get(i) {
                        Some(t) if !t.is_empty() => esc(t),
                        _ => MISSING.to_string(),
                    }),
                );
                line
            })
            .collect();

        // Width in chars, not bytes: "—" and "±" are one column each but several bytes.
        let width = |s: &str| s.chars().count();
        let widths: Vec<usize> = (0..header.len())
            .map(|c| {
                body.iter()
                    .map(|r| width(&r[c]))
                    .chain([width(&header[c]), 3]) // the separator needs at least `---`
                    .max()
                    .unwrap_or(3)
            })
            .collect();
        let line = |cells: &[String]| {
            let padded: Vec<String> = cells
                .iter()
                .enumerate()
                .map(|(c, s)| {
                    let pad = " ".repeat(widths[c] - width(s));
                    if c == 0 {
                        format!("{s}{pad}")
                    } else {
                        format!("{pad}{s}")
                    }
                })
                .collect();
            format!("| {} |\n", padded.join(" | "))
        };
        let separator: Vec<String> = widths
            .iter()
            .enumerate()
            .map(|(c, &w)| {
                if c == 0 {
                    "-".repeat(w)
                } else {
                    format!("{}:", "-".repeat(w - 1))
                }
            })
            .collect();

        let mut out = line(&header);
        out.push_str(&line(&separator));
        for row in &body {
            out.push_str(&line(row));
        }
        out
    }
}
