//! The figure and the worked example of docs/theory.md: T5's bucket staircase beside AT5's soft
//! bucket `f(n)`, and one offset of a trained AT5 model followed through `f`, the MLP, the
//! bias, the prior and the posterior, then back through the chain rule to the slope parameter.
use super::batch::make_batch;
use super::pooling::pooled_query;
use super::trainer::Trainer;
use crate::autodiff::Tape;
use crate::nn::Model;
use crate::params::ParamStore;
use crate::position::{BiasConfig, t5_bucket};
use crate::report::{LegendAt, LineOpts, Series, line_chart};
use std::fmt::Write;
use std::path::Path;

/// One distance `m = |n|` to the left of the query (`n = -m`): T5's bucket and AT5's soft
/// bucket `f = 1 - exp(-m / d)` for each saturation distance `d`.
#[derive(Clone, Debug, PartialEq)]
pub struct StaircaseRow {
    /// The distance `m = -n >= 0`.
    pub distance: usize,
    /// T5's bucket of `n = -m` (bidirectional: the keys before the query use buckets
    /// `0 .. num_buckets/2`).
    pub bucket: usize,
    /// `f(-m)` for each saturation distance, in the order given.
    pub f: Vec<f64>,
}

/// T5's buckets and AT5's `f` for the distances `0 ..= max_distance_shown` to the left.
pub fn staircase(
    num_buckets: usize,
    max_distance: usize,
    max_distance_shown: usize,
    saturation: &[f64],
) -> Vec<StaircaseRow> {
    (0..=max_distance_shown)
        .map(|m| StaircaseRow {
            distance: m,
            bucket: t5_bucket(-(m as i64), num_buckets, max_distance, true),
            f: saturation
                .iter()
                .map(|d| -(-(m as f64) / d).exp_m1())
                .collect(),
        })
        .collect()
}

/// Draws [`staircase`] to `path`: T5's bucket index scaled to `[0, 1]` (divided by the last
/// bucket of the direction) as a staircase, `f` for each saturation distance, and the lag `k`
/// as a vertical line.
pub fn staircase_figure(
    path: &Path,
    (num_buckets, max_distance): (usize, usize),
    len: usize,
    lag: usize,
    saturation: &[f64],
) -> Result<(), String> {
    let rows = staircase(num_buckets, max_distance, len - 1, saturation);
    let top = (num_buckets / 2 - 1) as f64;
    let mut steps = Vec::new();
    for r in &rows {
        let y = r.bucket as f64 / top;
        steps.push((r.distance as f64 - 0.5, y));
        steps.push((r.distance as f64 + 0.5, y));
    }
    let mut series = vec![Series::new(
        format!("T5 bucket / {top} ({num_buckets} buckets, max_distance {max_distance})"),
        steps,
    )];
    for d in saturation {
        // fine steps: f is smooth, and the chart marks every point
        let pts = (0..=4 * (len - 1))
            .map(|q| {
                let m = q as f64 / 4.0;
                (m, -(-m / d).exp_m1())
            })
            .collect();
        series.push(Series::new(format!("AT5 f(n), 1/beta = {d}"), pts));
    }
    series.push(Series::new(
        format!("lag k = {lag}"),
        vec![(lag as f64, 0.0), (lag as f64, 1.0)],
    ));
    // The curves end high on the right (f saturates, the staircase climbs to its last bucket)
    // and low on the right (f at a long distance): the gap between them holds the legend.
    let opts = LineOpts {
        y_range: Some((0.0, 1.0)),
        legend: LegendAt::MiddleRight,
        ..LineOpts::default()
    };
    line_chart(
        path,
        &format!("T5's fixed buckets and AT5's soft bucket, offsets n = -|n| (L = {len})"),
        "distance |n| to the left of the query (n = j - i <= 0)",
        "bucket (scaled) or f(n)",
        &series,
        opts,
    )
}

/// One AT5 head and offset of a trained model, worked through by hand in f64 and checked
/// against the model's own forward and the tape's backward.
#[derive(Clone, Debug)]
pub struct Explanation {
    /// Every line of the walk-through, as the `prior --explain` mode prints it.
    pub text: String,
    /// The largest disagreement between a hand-computed quantity and the model's (the bias,
    /// the prior, the posterior, and the gradient of `ln prior(n)` with respect to the slope
    /// parameter), relative to the larger of the two.
    pub worst_mismatch: f64,
}

/// `relu`.
fn relu(x: f64) -> f64 {
    x.max(0.0)
}

/// One direction's MLP of one head, in f64 from the store: `w1 [l1], b1 [l1], w2 [l1·l2],
/// b2 [l2], w3 [l2], b3`.
struct HandMlp {
    w1: Vec<f64>,
    b1: Vec<f64>,
    w2: Vec<f64>,
    b2: Vec<f64>,
    w3: Vec<f64>,
    b3: f64,
}

/// The MLP's forward at `x`: the pre-activations of both hidden layers and the output.
struct MlpPass {
    z1: Vec<f64>,
    z2: Vec<f64>,
    out: f64,
    /// `d out / d x` through the ReLUs that are on.
    slope: f64,
}

impl HandMlp {
    fn read(store: &ParamStore<f64>, prefix: &str, head: usize) -> Result<HandMlp, String> {
        let t = |name: &str| {
            let full = format!("{prefix}.{name}");
            let id = store
                .id(&full)
                .ok_or_else(|| format!("no parameter {full}"))?;
            let t = store.get(id);
            let per_head = t.len() / t.shape[0];
            Ok::<Vec<f64>, String>(t.data[head * per_head..(head + 1) * per_head].to_vec())
        };
        Ok(HandMlp {
            w1: t("w1")?,
            b1: t("b1")?,
            w2: t("w2")?,
            b2: t("b2")?,
            w3: t("w3")?,
            b3: t("b3")?[0],
        })
    }

    fn pass(&self, x: f64) -> MlpPass {
        let (l1, l2) = (self.w1.len(), self.b2.len());
        let z1: Vec<f64> = (0..l1).map(|u| x * self.w1[u] + self.b1[u]).collect();
        let z2: Vec<f64> = (0..l2)
            .map(|v| {
                self.b2[v]
                    + (0..l1)
                        .map(|u| relu(z1[u]) * self.w2[u * l2 + v])
                        .sum::<f64>()
            })
            .collect();
        let out = self.b3 + (0..l2).map(|v| relu(z2[v]) * self.w3[v]).sum::<f64>();
        // d z1_u / dx = w1_u; through relu where z1_u > 0; then w2, relu, w3
        let slope = (0..l2)
            .filter(|&v| z2[v] > 0.0)
            .map(|v| {
                self.w3[v]
                    * (0..l1)
                        .filter(|&u| z1[u] > 0.0)
                        .map(|u| self.w2[u * l2 + v] * self.w1[u])
                        .sum::<f64>()
            })
            .sum();
        MlpPass { z1, z2, out, slope }
    }
}

fn rel(a: f64, b: f64) -> f64 {
    let scale = a.abs().max(b.abs());
    if scale == 0.0 {
        0.0
    } else {
        (a - b).abs() / scale
    }
}

/// Pre-activations in three significant digits: near a ReLU's kink four decimals would all read 0.
fn list(xs: &[f64]) -> String {
    xs.iter()
        .map(|x| format!("{x:.2e}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Follows offset `n` of head `head` of `trainer`'s AT5 model (layer 0, the pooled query `i`,
/// the key `j = i + n`) through `f`, the MLP, the bias, the prior and the posterior of test
/// example `example`, then back: `d f / d c`, `d b / d f`, `d b(n) / d c` and
/// `d ln prior(n) / d c` by hand, the last checked against the tape (in f64).
/// `head: None` picks the head whose prior at `n` is largest.
pub fn explain_offset(
    trainer: &Trainer,
    head: Option<usize>,
    n: i64,
    example: usize,
) -> Result<Explanation, String> {
    let config = &trainer.model.config;
    if !matches!(config.bias, BiasConfig::At5(_)) {
        return Err(format!(
            "--explain follows AT5's soft bucket; this checkpoint's bias is {}",
            trainer.model.family()
        ));
    }
    let len = trainer.data.max_len;
    let q = pooled_query(config.pooling, len);
    let head = match head {
        Some(h) => h,
        None => {
            let rows = trainer.model.prior_row(&trainer.store, len, q);
            let j = (q as i64 + n).clamp(0, len as i64 - 1) as usize;
            (0..rows.len())
                .max_by(|&x, &y| rows[x][j].total_cmp(&rows[y][j]))
                .unwrap_or(0)
        }
    };
    if head >= config.heads {
        return Err(format!(
            "--head {head}: the model has {} heads",
            config.heads
        ));
    }
    let test = &trainer.data.test;
    if example >= test.len() {
        return Err(format!(
            "--example {example}: the test split has {} examples",
            test.len()
        ));
    }
    let j = q as i64 + n;
    if j < 0 || j >= len as i64 {
        return Err(format!(
            "--explain {n}: the pooled query {q} of a length-{len} sequence has offsets {} ..= {}",
            -(q as i64),
            len as i64 - 1 - q as i64
        ));
    }
    let j = j as usize;
    // The whole check in f64: the model rebuilt with the checkpoint's values.
    let store: ParamStore<f64> = trainer.store.cast();
    let model = Model::<f64>::new(config.clone(), &mut ParamStore::new(), 0)?;
    let ids = model.biases[0].param_ids();
    let prefix = store
        .name(ids[0])
        .strip_suffix(".a")
        .ok_or("an AT5 bias without its slope a")?
        .to_string();
    let raw = |name: &str| {
        store
            .get(store.id(&format!("{prefix}.{name}")).unwrap())
            .data[head]
    };
    let (dir, param, raw_slope) = if n > 0 {
        ("pos", "a", raw("a"))
    } else {
        ("neg", "c", raw("c"))
    };
    let rate = relu(raw_slope) / len as f64;
    let m = n.unsigned_abs() as f64;
    let f_of = |m: f64| -(-rate * m).exp_m1();
    let mlp = HandMlp::read(&store, &format!("{prefix}.{dir}"), head)?;

    let mut s = String::new();
    let w = &mut s;
    let (rate_name, dist_name) = if n > 0 {
        ("alpha", "1/alpha")
    } else {
        ("beta", "1/beta")
    };
    let _ = writeln!(
        w,
        "{} with at5 bias, epoch {}: head {head}, pooled query i = {q} (L = {len}), offset n = \
         {n} (key j = {j}), test example {example}",
        trainer.data.name, trainer.state.epoch
    );
    let _ = writeln!(w, "forward");
    let _ = writeln!(
        w,
        "  {param} = {raw_slope:.4}   {rate_name} = relu({param}) / L = {rate:.6}   {dist_name} = \
         {:.2}",
        1.0 / rate
    );
    let f = f_of(m);
    let _ = writeln!(w, "  f(n) = 1 - exp(-{rate_name} |n|) = {f:.6}");
    let pass = mlp.pass(f);
    let on1 = pass.z1.iter().filter(|&&z| z > 0.0).count();
    let on2 = pass.z2.iter().filter(|&&z| z > 0.0).count();
    let _ = writeln!(
        w,
        "  MLP ({dir}): layer 1 pre-activations w1 f + b1 = [{}] ({on1} of {} ReLUs on)",
        list(&pass.z1),
        pass.z1.len()
    );
    let _ = writeln!(
        w,
        "       layer 2 pre-activations = [{}] ({on2} of {} on)",
        list(&pass.z2),
        pass.z2.len()
    );
    let _ = writeln!(w, "  bias b(n) = w3 . relu(layer 2) + b3 = {:.6}", pass.out);

    // The model's own bias row and prior, for the check and for the softmax.
    let mut tape = Tape::<f64>::new();
    let p = store.bind(&mut tape);
    let grid = model.biases[0]
        .grid(&mut tape, &p, len, len, 0)
        .ok_or("the AT5 bias produced no grid")?;
    let at = |h: usize, k: usize| (h * len + q) * len + k;
    let row: Vec<f64> = (0..len)
        .map(|k| tape.value(grid).data[at(head, k)])
        .collect();
    let mut worst = rel(pass.out, row[j]);
    let top = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let z: f64 = row.iter().map(|b| (b - top).exp()).sum();
    let prior: Vec<f64> = row.iter().map(|b| (b - top).exp() / z).collect();
    let mode = (0..len)
        .max_by(|&x, &y| prior[x].total_cmp(&prior[y]))
        .unwrap();
    let _ = writeln!(
        w,
        "  the model's bias at n = {n}: {:.6}; over the row, b ranges over [{:.4}, {:.4}]",
        row[j],
        row.iter().cloned().fold(f64::INFINITY, f64::min),
        top
    );
    let _ = writeln!(
        w,
        "  prior(n) = exp(b(n)) / sum_j' exp(b(j' - i)) = {:.6} (uniform: 1/{len} = {:.6}; the \
         mode is n = {})",
        prior[j],
        1.0 / len as f64,
        mode as i64 - q as i64
    );
    let views =
        trainer
            .model
            .inspect(&trainer.store, &make_batch(&[&test[example]], len).0, None)?;
    let view = &views[0];
    let vat = |t: &crate::tensor::Tensor<f64>, k: usize| t.data[at(head, k)];
    worst = worst.max(rel(prior[j], vat(&view.prior, j)));
    let ctx: Vec<f64> = (0..len).map(|k| vat(&view.context, k)).collect();
    let cmax = ctx.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let like: Vec<f64> = ctx.iter().map(|c| (c - cmax).exp()).collect();
    let evidence: f64 = (0..len).map(|k| prior[k] * like[k]).sum();
    let post = prior[j] * like[j] / evidence;
    worst = worst.max(rel(post, vat(&view.posterior, j)));
    let _ = writeln!(
        w,
        "  context score q.k/sqrt(d_head) at j = {j}: {:.4} (row max {cmax:.4}); likelihood \
         exp(score - max) = {:.4}",
        ctx[j], like[j]
    );
    let _ = writeln!(
        w,
        "  posterior(n) = prior(n) likelihood(n) / sum_j' prior likelihood = {post:.6} (the \
         model's attention: {:.6})",
        vat(&view.posterior, j)
    );

    // Backward: by hand, then the tape.
    let _ = writeln!(w, "backward (d/d{param}, {param} > 0 so the ReLU passes)");
    let df = |m: f64| {
        if raw_slope > 0.0 {
            m / len as f64 * (-rate * m).exp()
        } else {
            0.0
        }
    };
    let db = |k: usize| {
        let off = k as i64 - q as i64;
        // only the offsets of this direction depend on this slope parameter
        if (off > 0) != (n > 0) {
            return 0.0;
        }
        let mm = off.unsigned_abs() as f64;
        mlp.pass(f_of(mm)).slope * df(mm)
    };
    let _ = writeln!(
        w,
        "  df/d{param} = (|n| / L) exp(-{rate_name} |n|) = {:.6}",
        df(m)
    );
    let _ = writeln!(
        w,
        "  db/df = sum over the ReLUs on of w3 w2 w1 = {:.6}",
        pass.slope
    );
    let db_n = db(j);
    let _ = writeln!(w, "  db(n)/d{param} = db/df . df/d{param} = {db_n:.6}");
    let mean_db: f64 = (0..len).map(|k| prior[k] * db(k)).sum();
    let dlogp = db_n - mean_db;
    let _ = writeln!(
        w,
        "  d ln prior(n)/d{param} = db(n)/d{param} - sum_j' prior(j') db(j' - i)/d{param} = \
         {db_n:.6} - ({mean_db:.6}) = {dlogp:.6}"
    );
    let mean_post: f64 = (0..len)
        .map(|k| prior[k] * like[k] / evidence * db(k))
        .sum();
    let _ = writeln!(
        w,
        "  d ln posterior(n)/d{param} (content fixed) = {db_n:.6} - ({mean_post:.6}) = {:.6}",
        db_n - mean_post
    );
    // The tape: ln softmax of the bias row at key j, differentiated.
    let sel = tape.constant(crate::tensor::Tensor::from_vec(
        &[len],
        (0..len).map(|k| if k == j { 1.0 } else { 0.0 }).collect(),
    ));
    let flat = tape.reshape(grid, &[config.heads * len, len]);
    let rowv = tape.slice(flat, 0, head * len + q, head * len + q + 1);
    let logp = tape.log_softmax(rowv);
    let logp = tape.reshape(logp, &[len]);
    let picked = tape.mul(logp, sel);
    let out = tape.sum(picked);
    let grads = tape.backward(out);
    let pid = store.id(&format!("{prefix}.{param}")).unwrap();
    let tape_grad = grads.get(p.var(pid)).map_or(0.0, |g| g.data[head]);
    worst = worst.max(rel(dlogp, tape_grad));
    let _ = writeln!(
        w,
        "  the tape's d ln prior(n)/d{param}: {tape_grad:.6}; largest relative disagreement of \
         hand and model above: {worst:.1e}"
    );
    Ok(Explanation {
        text: s,
        worst_mismatch: worst,
    })
}
