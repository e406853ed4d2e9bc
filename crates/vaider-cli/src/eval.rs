//! `vaider eval`: runs the eval set through the library (`vaider-eval`) with a line per item,
//! asks before a run whose estimated cost is above `--max-cost`, and prints where the reports
//! are; `vaider eval compare A.json B.json` prints two runs side by side.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use vaider_core::{Config, Vaider};
use vaider_eval::report::pct;

#[derive(Subcommand)]
pub enum EvalAction {
    /// Two runs side by side (their report.json files), as Markdown.
    Compare { a: PathBuf, b: PathBuf },
}

#[derive(Args)]
pub struct EvalArgs {
    /// The set's folder (default: eval/set in the current folder, else the set installed with
    /// Vaider, e.g. /usr/share/vaider/eval/set).
    #[arg(long)]
    set: Option<PathBuf>,
    /// Where items.jsonl, report.json and report.md go (default: eval/runs/<time>, or the
    /// data folder's eval-runs/<time> with the installed set).
    #[arg(long)]
    out: Option<PathBuf>,
    /// The provider to ask (default: the config's).
    #[arg(long)]
    provider: Option<String>,
    #[arg(long)]
    model: Option<String>,
    /// How videos go to the model: auto, full or keyframes (default: the config's).
    #[arg(long, value_parser = crate::parse_sampling)]
    sampling: Option<vaider_core::sampling::VideoSampling>,
    /// A prompt variant for the recordings, read from this file (it must still ask for the
    /// closing `DEFECTS:` line; docs/eval.md). Default: the built-in prompt.
    #[arg(long)]
    prompt_file: Option<PathBuf>,
    /// Only the items of this class (and as many controls).
    #[arg(long)]
    only: Option<String>,
    /// At most this many items (recordings and pairs in turn).
    #[arg(long)]
    limit: Option<usize>,
    /// Continue the run in --out: keep the items it finished, run the others.
    #[arg(long)]
    resume: bool,
    /// Ask before a run whose estimated cost is above this (USD).
    #[arg(long, default_value_t = 0.50)]
    max_cost: f64,
    /// Do not ask, whatever the estimate.
    #[arg(long)]
    yes: bool,
    /// Print report.json on stdout.
    #[arg(long)]
    json: bool,
}

/// `vaider eval` (or `vaider eval compare A B`): the estimate, a confirmation above
/// `--max-cost`, the run with a line per item, then the scores and where the reports are.
pub async fn eval(action: Option<EvalAction>, args: EvalArgs) -> Result<ExitCode> {
    if let Some(EvalAction::Compare { a, b }) = action {
        return compare_runs(&a, &b);
    }
    let engine = Vaider::open(Config::load()?)?;
    let (set, installed) = match &args.set {
        Some(set) => (set.clone(), false),
        None => vaider_eval::labels::default_set()?,
    };
    let items = vaider_eval::labels::select(
        vaider_eval::labels::load(&set)?,
        args.only.as_deref(),
        args.limit,
    )?;
    let config = engine.config();
    let model = args.model.clone().unwrap_or_else(|| config.model.clone());
    let (tokens, cost) = vaider_eval::run::estimate(&engine, &items, &model);
    eprintln!(
        "{} items · about {tokens} tokens · about ${cost:.4} on {model} (cached answers are free)",
        items.len()
    );
    if cost > args.max_cost && !args.yes && !confirm(cost, args.max_cost)? {
        bail!("stopped before the run: raise --max-cost or pass --yes");
    }
    let runs = if installed {
        engine.config().data_dir().join("eval-runs")
    } else {
        PathBuf::from("eval/runs")
    };
    let options = args.options(set, &runs)?;
    let report = vaider_eval::run(&engine, &options, |n, total, o| {
        eprintln!("{}", item_line(n, total, o));
    })
    .await?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_scores(&report, &options.out);
    }
    Ok(ExitCode::SUCCESS)
}

/// `vaider eval compare A B`: two runs' reports side by side, as Markdown.
fn compare_runs(a: &Path, b: &Path) -> Result<ExitCode> {
    let (a, b) = (vaider_eval::report::read(a)?, vaider_eval::report::read(b)?);
    print!("{}", vaider_eval::report::compare(&a, &b));
    Ok(ExitCode::SUCCESS)
}

impl EvalArgs {
    /// The run's options: the reports in `--out` or a new folder named by the time, the
    /// prompt variant read from `--prompt-file` (named by its file).
    fn options(&self, set: PathBuf, runs: &Path) -> Result<vaider_eval::Options> {
        let out = self
            .out
            .clone()
            .unwrap_or_else(|| runs.join(chrono::Utc::now().format("%Y%m%dT%H%M%SZ").to_string()));
        Ok(vaider_eval::Options {
            set,
            out,
            provider: self.provider.clone(),
            model: self.model.clone(),
            sampling: self.sampling,
            only: self.only.clone(),
            limit: self.limit,
            resume: self.resume,
            prompt: match &self.prompt_file {
                Some(path) => Some(prompt_variant(path)?),
                None => None,
            },
        })
    }
}

/// A prompt variant: its name (the file's stem) and its text.
fn prompt_variant(path: &Path) -> Result<(String, String)> {
    Ok((
        path.file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "custom".into()),
        std::fs::read_to_string(path)
            .with_context(|| format!("--prompt-file {}", path.display()))?,
    ))
}

/// The line printed as each item is done: what it truly holds, what was seen, how long.
fn item_line(n: usize, total: usize, o: &vaider_eval::Outcome) -> String {
    if o.error.is_none() {
        if let Some(f) = &o.failure {
            return format!(
                "[{n}/{total}] {} (failing run, step {}): named step {}, first wrong step {}, moment {} · {} ms",
                o.id,
                f.failing_step,
                f.failing_step_named.map_or("–".into(), |s| s.to_string()),
                f.first_wrong_step_named.map_or("–".into(), |s| s.to_string()),
                f.first_wrong_at_named.map_or("–".into(), |s| format!("{s:.1} s")),
                o.latency_ms
            );
        }
        if let Some(k) = &o.flaky {
            return format!(
                "[{n}/{total}] {} (flaky pair, {}): parted at step {}, {} named: {} · {} ms",
                o.id,
                k.kind,
                k.parted_at_named.map_or("–".into(), |s| s.to_string()),
                k.kind,
                if k.kind_named { "yes" } else { "no" },
                o.latency_ms
            );
        }
    }
    let verdict = match (&o.error, o.flagged) {
        (Some(e), _) => format!("error: {e}"),
        (None, true) => format!("flagged {}", o.predicted.join(", ")),
        (None, false) => "passed".into(),
    };
    let truth = if o.classes.is_empty() {
        "control".to_string()
    } else {
        o.classes.join(", ")
    };
    format!(
        "[{n}/{total}] {} ({truth}): {verdict} · {} ms",
        o.id, o.latency_ms
    )
}

/// The run's scores on one line, then where its reports are.
fn print_scores(report: &vaider_eval::RunReport, out: &Path) {
    let s = &report.scores;
    println!(
        "balanced accuracy {} · recall {} · specificity {} · verdicts {} · localisation {} · ${:.4}",
        pct(s.detection.balanced_accuracy),
        pct(s.detection.recall),
        pct(s.detection.specificity),
        pct(s.verdicts.rate),
        pct(s.localisation.rate),
        s.spend.cost_usd
    );
    let (f, k) = (&s.failures, &s.flaky);
    if f.items + k.items > 0 {
        println!(
            "failing runs: step {} · first wrong step {} · moment within 0.5 s {} · flaky pairs: parted at {} · difference named {}",
            pct(f.failing_step.rate),
            pct(f.first_wrong_step.rate),
            pct(f.moment.rate),
            pct(k.parted_at.rate),
            pct(k.kind_named.rate)
        );
    }
    println!("reports: {0}/report.md and {0}/report.json", out.display());
}

/// Asks on the terminal; with no terminal to ask on, the answer is no.
fn confirm(cost: f64, max: f64) -> Result<bool> {
    if !std::io::stdin().is_terminal() {
        return Ok(false);
    }
    eprint!("The estimate (${cost:.4}) is above --max-cost ${max:.2}. Run anyway? [y/N] ");
    std::io::stderr().flush()?;
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    Ok(matches!(line.trim(), "y" | "Y" | "yes"))
}
