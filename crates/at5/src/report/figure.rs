//! SVG figures (line charts, heatmaps, small multiples) rendered in memory and written atomically.
use super::atomic::write_atomic;
use plotters::coord::Shift;
use plotters::coord::ranged1d::ValueFormatter;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use std::path::Path;

/// One line of a chart: a legend label and its (x, y) points, drawn in the given order.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Series {
    /// The legend label.
    pub label: String,
    /// The points, in drawing order.
    pub points: Vec<(f64, f64)>,
}

impl Series {
    /// A series from a label and its points.
    pub fn new(label: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Series {
            label: label.into(),
            points,
        }
    }
}

/// Axis options for [`line_chart`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LineOpts {
    /// Logarithmic x axis (e.g. sequence length, learning rate); every x must then be > 0.
    pub log_x: bool,
    /// Fixed y range; `None` fits the data. Points outside a fixed range are left out (plotters
    /// does not clip, so they would be drawn over the axes), breaking the line there.
    pub y_range: Option<(f64, f64)>,
    /// Where the legend sits; a chart whose curves fill the upper right moves it elsewhere.
    pub legend: LegendAt,
}

/// A line chart's legend corner. The upper right suits curves that rise and level off below
/// the top (training curves); a chart whose curves end high on the right picks another.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LegendAt {
    /// The top right corner of the plotting area (the default).
    #[default]
    UpperRight,
    /// The top left corner.
    UpperLeft,
    /// Against the right edge, halfway up.
    MiddleRight,
    /// The bottom right corner.
    LowerRight,
}

impl LegendAt {
    fn position(self) -> SeriesLabelPosition {
        match self {
            LegendAt::UpperRight => SeriesLabelPosition::UpperRight,
            LegendAt::UpperLeft => SeriesLabelPosition::UpperLeft,
            LegendAt::MiddleRight => SeriesLabelPosition::MiddleRight,
            LegendAt::LowerRight => SeriesLabelPosition::LowerRight,
        }
    }
}

/// Tableau 10: distinct hues that stay distinguishable for common colour-vision deficiencies.
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

const FONT: &str = "sans-serif";

/// Line chart of `series` (one colour each, points marked, legend where `opts.legend` puts it)
/// written as an SVG to `path`.
///
/// Non-finite points are skipped and break the line, so a diverged run shows a gap rather than
/// a spike. Errors: no series, a series with no finite point, log-x with an x ≤ 0, an invalid
/// `y_range`, or an I/O failure; every message names `path`.
pub fn line_chart(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    opts: LineOpts,
) -> Result<(), String> {
    let err = |e: String| format!("{}: {e}", path.display());
    let bounds = Bounds::of(std::slice::from_ref(&series), opts).map_err(err)?;
    let svg = render((800, 500), |root| {
        let fonts = Fonts {
            caption: 22,
            desc: 16,
            legend: 14,
        };
        draw_lines(
            root,
            title,
            x_label,
            y_label,
            series,
            &bounds,
            &fonts,
            &|i| colour(i),
        )
    })
    .map_err(err)?;
    write_atomic(path, svg.as_bytes())
}

/// A grid of small line charts, one per `(panel title, series)` (e.g. one per attention head),
/// `cols` panels wide, written as an SVG to `path`.
///
/// All panels share one x and one y range so they can be compared at a glance, and a series
/// label keeps one colour across panels. Errors as for [`line_chart`], plus no panels or
/// `cols == 0`.
pub fn small_multiples(
    path: &Path,
    title: &str,
    panels: &[(String, Vec<Series>)],
    x_label: &str,
    y_label: &str,
    cols: usize,
) -> Result<(), String> {
    let err = |e: String| format!("{}: {e}", path.display());
    if panels.is_empty() {
        return Err(err("no panels to plot".into()));
    }
    if cols == 0 {
        return Err(err("small multiples need at least one column".into()));
    }
    let all: Vec<&[Series]> = panels.iter().map(|(_, s)| s.as_slice()).collect();
    let bounds = Bounds::of(&all, LineOpts::default()).map_err(err)?;
    // One colour per distinct label, in order of first appearance.
    let mut labels: Vec<&str> = Vec::new();
    for (_, ss) in panels {
        for s in ss {
            if !labels.contains(&s.label.as_str()) {
                labels.push(&s.label);
            }
        }
    }
    let cols = cols.min(panels.len());
    let rows = panels.len().div_ceil(cols);
    let (pw, ph) = (360u32, 260u32);
    let title_h = 40u32;
    let size = (pw * cols as u32, ph * rows as u32 + title_h);
    let svg = render(size, |root| {
        let body = root
            .titled(title, (FONT, 24))
            .map_err(|e| format!("cannot draw title: {e}"))?;
        let fonts = Fonts {
            caption: 16,
            desc: 13,
            legend: 11,
        };
        for (area, (name, ss)) in body.split_evenly((rows, cols)).iter().zip(panels) {
            let colour_of = |i: usize| {
                let idx = labels.iter().position(|l| *l == ss[i].label).unwrap_or(i);
                colour(idx)
            };
            draw_lines(
                area, name, x_label, y_label, ss, &bounds, &fonts, &colour_of,
            )
            .map_err(|e| format!("panel {name:?}: {e}"))?;
        }
        Ok(())
    })
    .map_err(err)?;
    write_atomic(path, svg.as_bytes())
}

/// Heatmap of `values` (row `r` drawn as the `r`-th row from the top, as a matrix or attention
/// map is read) with a colour bar labelled with the minimum and maximum, written as an SVG.
///
/// Non-finite cells are drawn grey and left out of the colour range. Errors: no rows, an empty
/// or ragged row, no finite value, or an I/O failure; every message names `path`.
pub fn heatmap(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    values: &[Vec<f64>],
) -> Result<(), String> {
    let err = |e: String| format!("{}: {e}", path.display());
    let nrows = values.len();
    let ncols = values.first().map_or(0, Vec::len);
    if nrows == 0 || ncols == 0 {
        return Err(err("heatmap has no values".into()));
    }
    if let Some((r, row)) = values.iter().enumerate().find(|(_, r)| r.len() != ncols) {
        return Err(err(format!(
            "heatmap row {r} has {} values but row 0 has {ncols}",
            row.len()
        )));
    }
    let finite = values.iter().flatten().copied().filter(|v| v.is_finite());
    let (lo, hi) = finite.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if lo > hi {
        return Err(err("heatmap has no finite value".into()));
    }
    // A constant map gets the middle colour rather than dividing by a zero span.
    let t_of = |v: f64| if hi > lo { (v - lo) / (hi - lo) } else { 0.5 };
    let (nr, nc) = (nrows as i32, ncols as i32);

    let svg = render((900, 700), |root| {
        let de = |e: &dyn std::fmt::Display| format!("cannot draw heatmap: {e}");
        let (main, bar) = root.split_horizontally(760);
        let mut chart = ChartBuilder::on(&main)
            .caption(title, (FONT, 22))
            .margin(10)
            .x_label_area_size(45)
            .y_label_area_size(55)
            // Reversed y so that row 0 is at the top.
            .build_cartesian_2d(0..nc, nr..0)
            .map_err(|e| de(&e))?;
        // Ticks sit on cell edges; shifting labels by half a cell puts them under cell centres.
        let (w, h) = chart.plotting_area().dim_in_pixel();
        let (cell_w, cell_h) = (w as i32 / nc, h as i32 / nr);
        chart
            .configure_mesh()
            .disable_mesh()
            .x_desc(x_label)
            .y_desc(y_label)
            .x_labels(ncols.min(16))
            .y_labels(nrows.min(16))
            .x_label_offset(cell_w / 2)
            .y_label_offset(cell_h / 2)
            .x_label_formatter(&|x| index_label(*x, nc))
            .y_label_formatter(&|y| index_label(*y, nr))
            .label_style((FONT, 13))
            .axis_desc_style((FONT, 16))
            .draw()
            .map_err(|e| de(&e))?;
        let cells = values.iter().enumerate().flat_map(|(r, row)| {
            row.iter().enumerate().map(move |(c, &v)| {
                let fill = if v.is_finite() {
                    viridis(t_of(v))
                } else {
                    RGBColor(200, 200, 200)
                };
                let (x, y) = (c as i32, r as i32);
                Rectangle::new([(x, y), (x + 1, y + 1)], fill.filled())
            })
        });
        chart.draw_series(cells).map_err(|e| de(&e))?;

        // Colour bar: a vertical gradient over [lo, hi] with its own value axis.
        let span = if hi > lo {
            (lo, hi)
        } else {
            (lo - 0.5, hi + 0.5)
        };
        let mut cb = ChartBuilder::on(&bar)
            .margin_top(60)
            .margin_bottom(55)
            .margin_right(10)
            .set_label_area_size(LabelAreaPosition::Right, 70)
            .build_cartesian_2d(0.0..1.0, span.0..span.1)
            .map_err(|e| de(&e))?;
        cb.configure_mesh()
            .disable_mesh()
            .disable_x_axis()
            .y_labels(5)
            .y_label_formatter(&|v| fmt_num(*v))
            .label_style((FONT, 12))
            .draw()
            .map_err(|e| de(&e))?;
        let steps = 100;
        let dv = (span.1 - span.0) / steps as f64;
        cb.draw_series((0..steps).map(|i| {
            let v0 = span.0 + dv * i as f64;
            let t = if hi > lo {
                i as f64 / (steps - 1) as f64
            } else {
                0.5
            };
            Rectangle::new([(0.0, v0), (1.0, v0 + dv)], viridis(t).filled())
        }))
        .map_err(|e| de(&e))?;
        // The extremes spelled out, since axis ticks land on round values inside the range.
        let style = TextStyle::from((FONT, 13)).color(&BLACK);
        let (_, bh) = bar.dim_in_pixel();
        bar.draw_text(&format!("max {}", fmt_num(hi)), &style, (5, 35))
            .map_err(|e| de(&e))?;
        bar.draw_text(&format!("min {}", fmt_num(lo)), &style, (5, bh as i32 - 35))
            .map_err(|e| de(&e))?;
        Ok(())
    })
    .map_err(err)?;
    write_atomic(path, svg.as_bytes())
}

/// A heatmap tick label: the row or column index, blank at the far edge (no cell there).
fn index_label(i: i32, n: i32) -> String {
    if (0..n).contains(&i) {
        i.to_string()
    } else {
        String::new()
    }
}

/// A compact number for axis and colour-bar labels: four significant digits, scientific
/// notation outside [1e-3, 1e5).
pub(crate) fn fmt_num(v: f64) -> String {
    let a = v.abs();
    if v == 0.0 {
        "0".to_string()
    } else if !(1e-3..1e5).contains(&a) {
        format!("{v:.2e}")
    } else {
        let decimals = (3 - a.log10().floor() as i32).max(0) as usize;
        let s = format!("{v:.decimals$}");
        // Trailing zeros carry no information on a tick label.
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    }
}

/// The viridis colour map (perceptually uniform, readable in greyscale), `t` in [0, 1],
/// interpolated linearly between nine stops.
fn viridis(t: f64) -> RGBColor {
    const STOPS: [(u8, u8, u8); 9] = [
        (68, 1, 84),
        (71, 44, 122),
        (59, 81, 139),
        (44, 113, 142),
        (33, 144, 141),
        (39, 173, 129),
        (92, 200, 99),
        (170, 220, 50),
        (253, 231, 37),
    ];
    let x = t.clamp(0.0, 1.0) * (STOPS.len() - 1) as f64;
    let i = (x.floor() as usize).min(STOPS.len() - 2);
    let f = x - i as f64;
    let lerp = |a: u8, b: u8| (a as f64 + (b as f64 - a as f64) * f).round() as u8;
    let (a, b) = (STOPS[i], STOPS[i + 1]);
    RGBColor(lerp(a.0, b.0), lerp(a.1, b.1), lerp(a.2, b.2))
}

/// Renders into an in-memory SVG, so a failure part-way never leaves a partial figure on disk.
fn render(
    size: (u32, u32),
    draw: impl FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> Result<(), String>,
) -> Result<String, String> {
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, size).into_drawing_area();
        root.fill(&WHITE)
            .map_err(|e| format!("cannot draw background: {e}"))?;
        draw(&root)?;
        root.present()
            .map_err(|e| format!("cannot finish SVG: {e}"))?;
    }
    Ok(buf)
}

/// Font sizes for one chart; small multiples use smaller ones.
struct Fonts {
    caption: u32,
    desc: u32,
    legend: u32,
}

/// The axis ranges of a chart (or of all panels together), checked before any drawing.
struct Bounds {
    x: (f64, f64),
    y: (f64, f64),
    opts: LineOpts,
}

impl Bounds {
    /// Ranges covering every finite point of every group of series, padded by 5% so that points
    /// on the extremes are not drawn on the axes.
    fn of(groups: &[&[Series]], opts: LineOpts) -> Result<Bounds, String> {
        if groups.iter().all(|g| g.is_empty()) {
            return Err("no series to plot".into());
        }
        if let Some((lo, hi)) = opts.y_range
            && !(lo.is_finite() && hi.is_finite() && lo < hi)
        {
            return Err(format!(
                "y_range ({lo}, {hi}) must be finite with min < max"
            ));
        }
        let (mut x, mut y) = (
            (f64::INFINITY, f64::NEG_INFINITY),
            (f64::INFINITY, f64::NEG_INFINITY),
        );
        for s in groups.iter().flat_map(|g| g.iter()) {
            let mut any = false;
            for &(px, py) in &s.points {
                if !(px.is_finite() && py.is_finite()) {
                    continue;
                }
                if opts.log_x && px <= 0.0 {
                    return Err(format!(
                        "series {:?}: x = {px} cannot be shown on a log x axis",
                        s.label
                    ));
                }
                any = true;
                x = (x.0.min(px), x.1.max(px));
                y = (y.0.min(py), y.1.max(py));
            }
            if !any {
                return Err(format!("series {:?} has no finite point", s.label));
            }
        }
        let x = if opts.log_x {
            // Pad by a ratio: an additive pad could reach 0 or below.
            if x.0 < x.1 {
                let r = (x.1 / x.0).powf(0.05);
                (x.0 / r, x.1 * r)
            } else {
                (x.0 / 2.0, x.1 * 2.0)
            }
        } else {
            pad(x)
        };
        let y = opts.y_range.unwrap_or_else(|| pad(y));
        Ok(Bounds { x, y, opts })
    }
}

fn pad((lo, hi): (f64, f64)) -> (f64, f64) {
    if lo < hi {
        let p = (hi - lo) * 0.05;
        (lo - p, hi + p)
    } else {
        // A single value or a flat line: give the axis some width around it.
        let p = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
        (lo - p, hi + p)
    }
}

/// Ticks at powers of 2 over a short range (sequence lengths 16..512 get a tick each, where
/// base 10 would label at most one), powers of 10 over a wide one (learning-rate sweeps).
fn log_base((lo, hi): (f64, f64)) -> f64 {
    if hi / lo < 1e3 { 2.0 } else { 10.0 }
}

/// Draws one line chart (caption, labelled axes, lines with marked points, legend) on `area`.
#[allow(clippy::too_many_arguments)]
fn draw_lines<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    b: &Bounds,
    fonts: &Fonts,
    colour_of: &dyn Fn(usize) -> RGBColor,
) -> Result<(), String> {
    let mut builder = ChartBuilder::on(area);
    builder
        .caption(title, (FONT, fonts.caption))
        .margin(10)
        .x_label_area_size(fonts.desc * 3)
        .y_label_area_size(fonts.desc * 4);
    let y = b.y.0..b.y.1;
    // The two axis kinds are different types, so the drawing is generic over the x coordinate.
    if b.opts.log_x {
        let chart = builder
            .build_cartesian_2d((b.x.0..b.x.1).log_scale().base(log_base(b.x)), y)
            .map_err(|e| format!("cannot draw chart: {e}"))?;
        draw_into(chart, x_label, y_label, series, b, fonts, colour_of)
    } else {
        let chart = builder
            .build_cartesian_2d(b.x.0..b.x.1, y)
            .map_err(|e| format!("cannot draw chart: {e}"))?;
        draw_into(chart, x_label, y_label, series, b, fonts, colour_of)
    }
}

fn draw_into<'a, DB, X>(
    mut chart: ChartContext<'a, DB, Cartesian2d<X, RangedCoordf64>>,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    b: &Bounds,
    fonts: &Fonts,
    colour_of: &dyn Fn(usize) -> RGBColor,
) -> Result<(), String>
where
    DB: DrawingBackend + 'a,
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let de = |e: &dyn std::fmt::Display| format!("cannot draw chart: {e}");
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .x_label_formatter(&|v| fmt_num(*v))
        .y_label_formatter(&|v| fmt_num(*v))
        .axis_desc_style((FONT, fonts.desc))
        .label_style((FONT, fonts.desc.saturating_sub(3).max(8)))
        .light_line_style(RGBColor(235, 235, 235))
        .max_light_lines(2)
        .draw()
        .map_err(|e| de(&e))?;
    let inside = |&(x, y): &(f64, f64)| {
        x.is_finite() && y.is_finite() && (b.opts.y_range.is_none() || (b.y.0..=b.y.1).contains(&y))
    };
    for (i, s) in series.iter().enumerate() {
        let c = colour_of(i);
        // Each run of drawable points is its own line, so gaps stay gaps.
        let runs: Vec<&[(f64, f64)]> = s
            .points
            .split(|p| !inside(p))
            .filter(|r| !r.is_empty())
            .collect();
        for run in runs {
            chart
                .draw_series(LineSeries::new(run.iter().copied(), c.stroke_width(2)))
                .map_err(|e| de(&e))?;
        }
        // The legend entry hangs on the markers: one per series however many runs, and present
        // even when a fixed y range leaves nothing to draw.
        chart
            .draw_series(
                s.points
                    .iter()
                    .filter(|p| inside(p))
                    .map(|&p| Circle::new(p, 3, c.filled())),
            )
            .map_err(|e| de(&e))?
            .label(s.label.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .position(b.opts.legend.position())
        .label_font((FONT, fonts.legend))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| de(&e))?;
    Ok(())
}
