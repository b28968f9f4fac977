//! `gradcheck`: checks the learnable bucketization — tape gradients of every bias family's
//! parameters against central differences, and T5's boundaries, which have no gradient.
use at5::autodiff::gradcheck::{ABS_TOL, MAX_COORDS, REL_TOL};
use at5::nn::check::{
    BiasCheck, CHECK_INIT_STD, CHECK_LEN, CHECK_STEP, CheckOptions, CheckPath, MIN_RELU_MARGIN,
    T5Probe, VACUOUS_FACTOR, check_bias_gradients_with, small_bias_with,
};
use at5::position::FAMILIES;
use at5::report::Table;
use at5_app::cli::usage_error;
use clap::Parser;

/// Compare tape gradients with central differences for each position-bias parameter tensor
/// of a tiny f64 model (D = 8, H = 2, a padded batch, cross-entropy), on the whole graph and on
/// the pruned pooled-row path training uses.
#[derive(Parser, Debug)]
#[command(name = "gradcheck", version)]
struct Cli {
    /// Check one family (default: every family).
    #[arg(long)]
    bias: Option<String>,
    /// Seed of the model's initialisation.
    #[arg(long, default_value_t = 11)]
    seed: u64,
    /// Sequence length L of the checked model (3 to 64).
    #[arg(long, default_value_t = CHECK_LEN)]
    len: usize,
    /// Init std of the AT5 and AT5-NoB MLPs (the paper's is 0.01: try it to see a vacuous pass).
    #[arg(long, default_value_t = CHECK_INIT_STD)]
    init_std: f64,
    /// Central-difference step.
    #[arg(long, default_value_t = CHECK_STEP)]
    h: f64,
    /// Negative control: flip the sign of every bias tensor's tape gradient before comparing,
    /// to see what a failing check looks like (exit code 1).
    #[arg(long)]
    perturb_backward: bool,
}

fn main() {
    let cli = at5_app::cli::parse::<Cli>();
    at5_app::cli::init_kernels();
    let names: Vec<&str> = match &cli.bias {
        Some(b) => vec![b.as_str()],
        None => FAMILIES.to_vec(),
    };
    let opts = CheckOptions {
        len: cli.len,
        init_std: cli.init_std,
        h: cli.h,
        perturb_backward: cli.perturb_backward,
    };
    opts.check().unwrap_or_else(|e| usage_error(e));
    let configs: Vec<_> = names
        .iter()
        .map(|n| small_bias_with(n, &opts).unwrap_or_else(|e| usage_error(format!("--bias: {e}"))))
        .collect();
    let mut table = Table::new(
        "family",
        [
            "path",
            "parameter",
            "size",
            "checked",
            "max grad",
            "max abs error",
            "max rel error",
            "result",
        ],
        0,
    );
    let mut checks: Vec<BiasCheck> = Vec::new();
    let mut vacuous = Vec::new();
    for (cfg, path) in configs
        .iter()
        .flat_map(|c| CheckPath::ALL.map(move |p| (c, p)))
    {
        let check = check_bias_gradients_with(cfg, cli.seed, path, &opts)
            .unwrap_or_else(|e| usage_error(e));
        for p in &check.params {
            let r = &p.report;
            let name = match p.name.strip_prefix("bias.") {
                Some(short) => short.to_string(),
                // the worst coordinate means something only where an error was measured
                None if r.max_rel_err > 0.0 => format!("{} (worst: {})", p.name, p.worst),
                None => p.name.clone(),
            };
            if p.vacuous() {
                vacuous.push(format!(
                    "{} {} {name}: largest gradient {:.1e}",
                    check.family,
                    path.name(),
                    p.max_grad
                ));
            }
            table.row(
                check.family,
                [
                    path.name().to_string(),
                    name,
                    p.size.to_string(),
                    r.checked.to_string(),
                    format!("{:.1e}", p.max_grad),
                    format!("{:.1e}", r.max_abs_err),
                    format!("{:.1e}", r.max_rel_err),
                    if r.passed { "pass" } else { "FAIL" }.to_string(),
                ],
            );
        }
        checks.push(check);
    }
    print_config(&opts);
    at5_app::out!("{}", table.to_markdown());
    if !vacuous.is_empty() {
        at5_app::outln!(
            "\nwarning: {} tensor(s) with every gradient below {VACUOUS_FACTOR} x the absolute \
             tolerance {ABS_TOL:.0e}: they pass whatever the backward computes, so their pass \
             shows nothing (raise --init-std):\n  {}",
            vacuous.len(),
            vacuous.join("\n  ")
        );
    }
    let mut ok = true;
    for c in &checks {
        match c.relu_margin {
            Some(m) if m < MIN_RELU_MARGIN => {
                at5_app::outln!(
                    "{}: a ReLU input is {m:.1e} from its kink (< {MIN_RELU_MARGIN:.0e}): the \
                     check is not meaningful at this seed",
                    c.family
                );
                ok = false;
            }
            _ => {}
        }
        ok &= c.passed();
    }
    let margins: Vec<String> = checks
        .iter()
        .filter_map(|c| {
            c.relu_margin
                .map(|m| format!("{} {} {m:.2e}", c.family, c.path.name()))
        })
        .collect();
    if !margins.is_empty() {
        at5_app::outln!(
            "\nsmallest |ReLU input| (must be >= {MIN_RELU_MARGIN:.0e}): {}",
            margins.join(", ")
        );
    }
    if names.contains(&"t5") {
        t5_boundaries(cli.seed, cli.len);
    }
    if !ok {
        at5_app::outln!("\nFAILED");
        std::process::exit(1);
    }
}

/// What was checked, before the table: the model, each family's small variant, both paths,
/// the coordinates, the step and the pass rule.
fn print_config(opts: &CheckOptions) {
    let (l, h) = (opts.len, opts.h);
    at5_app::outln!(
        "Tape gradient vs central difference of the loss of a tiny f64 model, per parameter \
         tensor.\n\
         model: D = 8, H = 2, FFN 16, vocab 5, 3 classes, L = {l}, cross-entropy on a batch of 2 \
         (the second padded in its last 2 slots); weights outside the bias scaled x8, no dropout\n\
         paths: whole = 1 layer, mean pooling, every query row; pruned = 2 layers, last-slot \
         pooling, the last block computes the pooled row alone (as training does)\n\
         biases: t5 8 buckets up to distance {l}; at5/at5-nob MLP widths 4 and 3, init std {}; \
         at5 slope parameters a, c ~ U(1, 10) (so a, c > 0: the ReLU's a < 0 side is not checked); \
         fire width 6\n\
         coordinates: every one of each bias tensor (evenly sampled beyond {MAX_COORDS}); the \
         rest of the model as one row, up to {MAX_COORDS} per tensor\n\
         h = {h:e}; pass: |a - n| <= {ABS_TOL:.0e} + {REL_TOL:.0e} max(|a|, |n|) at every \
         coordinate; max rel error is over coordinates with |a - n| > {ABS_TOL:.0e} (0 when \
         none)",
        opts.init_std
    );
    if opts.perturb_backward {
        at5_app::outln!(
            "negative control (--perturb-backward): every bias tensor's tape gradient has its \
             sign flipped before the comparison; each tensor with a gradient must FAIL"
        );
    }
    at5_app::outln!();
}

/// Shows that T5's bucket boundaries get no gradient: the bias is piecewise constant in them.
fn t5_boundaries(seed: u64, len: usize) {
    let probe = T5Probe::with_len(seed, len).unwrap_or_else(|e| usage_error(e));
    let d0 = probe.max_distance as f64;
    let l = len as i64 - 1;
    at5_app::outln!(
        "\nt5 bucket boundaries ({} buckets, offsets -{l}..={l}): the bias b(n; D) = \
         table[bucket(n; D)] with the boundary D = max_distance made real-valued.",
        probe.num_buckets
    );
    let hs = [1e-3, 1e-6];
    let at = |d: f64| {
        hs.iter()
            .map(|&h| format!("{:.3e} at h = {h:.0e}", probe.quotient(d, h)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    at5_app::outln!(
        "  D = {d0} (the model's): max |b(D+h) - b(D-h)| / 2h = {}",
        at(d0)
    );
    let range = (2.0, 16.0);
    let jumps = probe.jumps(range);
    for (d, m, k) in &jumps {
        at5_app::outln!(
            "  D = {d:.4} (distance {m} moves between buckets {} and {}): {}",
            k - 1,
            k,
            at(*d)
        );
    }
    let (points, nonzero, near) = probe.scan((2.01, 16.0), 1399, 1e-3);
    at5_app::outln!(
        "  scan of D over [2.01, 16] ({points} points, h = 1e-3): non-zero at {nonzero}, {} \
         within h of a jump point",
        if near { "every one" } else { "NOT every one" }
    );
    at5_app::outln!(
        "  => d b / d D is 0 almost everywhere and undefined at the {} jumps (the quotient \
         grows as 1/h there); T5 learns only its table (the t5 table row above).",
        jumps.len()
    );
}
