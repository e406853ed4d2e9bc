//! The reports of a run: `report.json` (everything, to compare later) and `report.md` (the
//! tables a person reads), and the side-by-side Markdown of two runs (`vaider eval compare`).

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result};

use crate::run::{Outcome, RunReport};
use crate::score::{Ratio, Scores};

pub fn write(report: &RunReport, out: &Path) -> Result<()> {
    let json = out.join("report.json");
    std::fs::write(&json, serde_json::to_vec_pretty(report)?)
        .with_context(|| format!("cannot write {}", json.display()))?;
    let md = out.join("report.md");
    std::fs::write(&md, markdown(report))
        .with_context(|| format!("cannot write {}", md.display()))?;
    Ok(())
}

/// A copy in the data folder's `evals/`, where the history UI's eval page lists the runs.
pub fn keep_for_history(report: &RunReport, data_dir: &Path) -> Result<()> {
    let dir = data_dir.join("evals");
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let stamp: String = report
        .finished_at
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect();
    let path = dir.join(format!("{stamp}.json"));
    std::fs::write(&path, serde_json::to_vec(report)?)
        .with_context(|| format!("cannot write {}", path.display()))
}

pub fn read(path: &Path) -> Result<RunReport> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_slice(&bytes)
        .with_context(|| format!("{} is not an eval report", path.display()))
}

/// A share as a percentage with one decimal, or a dash when it is undefined.
pub fn pct(value: Option<f64>) -> String {
    value
        .map(|v| format!("{:.1} %", v * 100.0))
        .unwrap_or_else(|| "–".into())
}

pub fn markdown(report: &RunReport) -> String {
    let mut md = run_header(report);
    md.push_str(&summary_table(&[&report.scores], &["this run"]));
    md.push_str(&class_table(&report.scores));
    md.push_str("\n## Items\n\n| item | labelled | flagged | named | verdicts right | localised | tokens in/out | cost | ms |\n|---|---|---|---|---:|---|---:|---:|---:|\n");
    for o in report
        .items
        .iter()
        .filter(|o| o.failure.is_none() && o.flaky.is_none())
    {
        md.push_str(&item_row(o));
    }
    md.push_str(&failure_rows(&report.items));
    md.push_str(&flaky_rows(&report.items));
    md
}

fn yes(right: bool) -> &'static str {
    if right {
        "right"
    } else {
        "wrong"
    }
}

fn step(n: Option<u64>) -> String {
    n.map_or("–".into(), |n| n.to_string())
}

/// Each failing run: the steps and moment labelled against those named.
fn failure_rows(items: &[Outcome]) -> String {
    let runs: Vec<_> = items
        .iter()
        .filter_map(|o| Some((o, o.failure.as_ref()?)))
        .collect();
    if runs.is_empty() {
        return String::new();
    }
    let mut md = String::from("\n## Failing runs\n\n| item | failing step (label / named) | first wrong step (label / named) | first wrong moment (label / named) | watched | cost |\n|---|---|---|---|---|---:|\n");
    for (o, f) in runs {
        let labelled: Vec<String> = f.first_wrong_steps.iter().map(u64::to_string).collect();
        let _ = writeln!(
            md,
            "| {} | {} / {} ({}) | {} / {} ({}) | {:.2} s / {} ({}) | {:.1}–{:.1} s | ${:.5} |",
            o.id,
            f.failing_step,
            step(f.failing_step_named),
            yes(f.failing_step_right()),
            labelled.join(" or "),
            step(f.first_wrong_step_named),
            yes(f.first_wrong_step_right()),
            f.first_wrong_at,
            f.first_wrong_at_named
                .map_or("–".into(), |at| format!("{at:.2} s")),
            yes(f.moment_right()),
            f.watched.0,
            f.watched.1,
            o.cost_usd
        );
    }
    md
}

/// Each flaky pair: where they parted and the kind of difference, labelled against named.
fn flaky_rows(items: &[Outcome]) -> String {
    let pairs: Vec<_> = items
        .iter()
        .filter_map(|o| Some((o, o.flaky.as_ref()?)))
        .collect();
    if pairs.is_empty() {
        return String::new();
    }
    let mut md = String::from("\n## Flaky pairs\n\n| item | parted at (label / named) | difference | named | cost |\n|---|---|---|---|---:|\n");
    for (o, f) in pairs {
        let _ = writeln!(
            md,
            "| {} | {} / {} ({}) | {} | {} | ${:.5} |",
            o.id,
            f.parted_at,
            step(f.parted_at_named),
            yes(f.parted_at_right()),
            f.kind,
            if f.kind_named { "yes" } else { "no" },
            o.cost_usd
        );
    }
    md
}

/// `80.0 % (8/10)`.
fn ratio_text(r: &Ratio) -> String {
    format!("{} ({}/{})", pct(r.rate), r.hits, r.total)
}

/// The title and the line saying how the run was made.
fn run_header(report: &RunReport) -> String {
    let s = &report.scores;
    let only = report.only.as_deref().map(|c| format!(" · only {c}"));
    let limit = report.limit.map(|n| format!(" · limit {n}"));
    format!(
        "# Vaider eval: {} {}\n\n{} · sampling {} · prompt {} · {} items scored, {} failed · set {}{}{}\n\n",
        report.provider,
        report.model,
        report.finished_at,
        report.sampling,
        report.prompt,
        s.items,
        s.errors,
        report.set,
        only.unwrap_or_default(),
        limit.unwrap_or_default(),
    )
}

/// Each class's counts, precision, recall and F1.
fn class_table(s: &Scores) -> String {
    let mut md = String::from("\n## Per class\n\n| class | support | TP | FP | FN | precision | recall | F1 |\n|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for c in &s.classes {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            c.class,
            c.support,
            c.tp,
            c.fp,
            c.fn_,
            pct(c.precision),
            pct(c.recall),
            pct(c.f1)
        );
    }
    md
}

/// One item's line: what was labelled, what the model said, and what it cost.
fn item_row(o: &Outcome) -> String {
    let right = o
        .verdicts
        .iter()
        .filter(|v| v.answer == Some(v.truth))
        .count();
    let labelled = if o.classes.is_empty() {
        "control".into()
    } else {
        o.classes.join(", ")
    };
    let flagged = if o.error.is_some() {
        "error"
    } else if o.flagged {
        "yes"
    } else {
        "no"
    };
    let localised = o.localised.map(|l| if l { "hit" } else { "miss" });
    format!(
        "| {} | {} | {} | {} | {}/{} | {} | {}/{} | ${:.5} | {} |\n",
        o.id,
        labelled,
        flagged,
        o.predicted.join(", "),
        right,
        o.verdicts.len(),
        localised.unwrap_or("–"),
        o.input_tokens,
        o.output_tokens,
        o.cost_usd,
        o.latency_ms
    )
}

fn summary_table(runs: &[&Scores], names: &[&str]) -> String {
    let mut md = format!(
        "| score | {} |\n|---|{}\n",
        names.join(" | "),
        "---:|".repeat(names.len())
    );
    let row = |label: &str, f: &dyn Fn(&Scores) -> String| {
        format!(
            "| {label} | {} |\n",
            runs.iter().map(|s| f(s)).collect::<Vec<_>>().join(" | ")
        )
    };
    md += &row("balanced accuracy (defect or not)", &|s| {
        pct(s.detection.balanced_accuracy)
    });
    md += &row("recall on defects", &|s| pct(s.detection.recall));
    md += &row("specificity on controls", &|s| pct(s.detection.specificity));
    md += &row("verdict accuracy (expectations)", &|s| {
        format!(
            "{} ({}/{})",
            pct(s.verdicts.rate),
            s.verdicts.hits,
            s.verdicts.total
        )
    });
    md += &row("localisation (time or region hit)", &|s| {
        format!(
            "{} ({}/{})",
            pct(s.localisation.rate),
            s.localisation.hits,
            s.localisation.total
        )
    });
    md += &row("macro F1 over classes", &|s| pct(macro_f1(s)));
    md += &row("failing runs: failing step named right", &|s| {
        ratio_text(&s.failures.failing_step)
    });
    md += &row("failing runs: first wrong step named right", &|s| {
        ratio_text(&s.failures.first_wrong_step)
    });
    md += &row("failing runs: first wrong moment within 0.5 s", &|s| {
        ratio_text(&s.failures.moment)
    });
    md += &row(
        "failing runs: first wrong moment inside the stretch watched",
        &|s| ratio_text(&s.failures.moment_watched),
    );
    md += &row("flaky pairs: parting step named right", &|s| {
        ratio_text(&s.flaky.parted_at)
    });
    md += &row("flaky pairs: kind of difference named", &|s| {
        ratio_text(&s.flaky.kind_named)
    });
    md += &row("input tokens per item", &|s| {
        s.spend
            .mean_input_tokens
            .map(|v| format!("{v:.0}"))
            .unwrap_or("–".into())
    });
    md += &row("cost per item", &|s| {
        s.spend
            .mean_cost_usd
            .map(|v| format!("${v:.5}"))
            .unwrap_or("–".into())
    });
    md += &row("total cost", &|s| format!("${:.4}", s.spend.cost_usd));
    md += &row("latency per item", &|s| {
        s.spend
            .mean_latency_ms
            .map(|v| format!("{v:.0} ms"))
            .unwrap_or("–".into())
    });
    md
}

/// The mean F1 of the classes that have an F1 (a class with no item and no guess has none).
pub fn macro_f1(scores: &Scores) -> Option<f64> {
    let f1s: Vec<f64> = scores.classes.iter().filter_map(|c| c.f1).collect();
    (!f1s.is_empty()).then(|| f1s.iter().sum::<f64>() / f1s.len() as f64)
}

/// Two runs side by side: the summary, then each class's recall and F1 with the change.
pub fn compare(a: &RunReport, b: &RunReport) -> String {
    let name = |r: &RunReport| {
        format!(
            "{} {} ({}, prompt {})",
            r.provider, r.model, r.sampling, r.prompt
        )
    };
    let (na, nb) = (format!("A: {}", name(a)), format!("B: {}", name(b)));
    let mut md = format!(
        "# Vaider eval: A against B\n\nA: {} · {} items\nB: {} · {} items\n\n",
        a.finished_at, a.scores.items, b.finished_at, b.scores.items
    );
    md += &summary_table(&[&a.scores, &b.scores], &[&na, &nb]);
    if let Some(line) = sampling_goal(a, b) {
        md += &line;
    }
    md += &class_deltas(a, b);
    let changed = judged_differently(a, b);
    if !changed.is_empty() {
        md += "\n## Items judged differently\n\n";
        md += &changed.join("\n");
        md.push('\n');
    }
    md
}

/// Each class's recall and F1 in both runs, with the change.
fn class_deltas(a: &RunReport, b: &RunReport) -> String {
    let mut md = String::from("\n| class | recall A | recall B | Δ recall | F1 A | F1 B | Δ F1 |\n|---|---:|---:|---:|---:|---:|---:|\n");
    for (ca, cb) in a.scores.classes.iter().zip(&b.scores.classes) {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} |",
            ca.class,
            pct(ca.recall),
            pct(cb.recall),
            delta(ca.recall, cb.recall),
            pct(ca.f1),
            pct(cb.f1),
            delta(ca.f1, cb.f1)
        );
    }
    md
}

/// The items one run flagged and the other did not, each with which run was right.
fn judged_differently(a: &RunReport, b: &RunReport) -> Vec<String> {
    a.items
        .iter()
        .filter_map(|x| {
            let y = b.items.iter().find(|y| y.id == x.id)?;
            (x.flagged != y.flagged).then(|| {
                let right = |flagged: bool| {
                    if flagged != x.classes.is_empty() {
                        "right"
                    } else {
                        "wrong"
                    }
                };
                format!(
                    "- {}: A {} ({}), B {} ({})",
                    x.id,
                    flag(x.flagged),
                    right(x.flagged),
                    flag(y.flagged),
                    right(y.flagged)
                )
            })
        })
        .collect()
}

/// Full sampling against change-aware (`auto`): the goal is recall within 2 points.
fn sampling_goal(a: &RunReport, b: &RunReport) -> Option<String> {
    let (full, auto) = match (a.sampling.as_str(), b.sampling.as_str()) {
        ("full", "auto") => (a, b),
        ("auto", "full") => (b, a),
        _ => return None,
    };
    let points = (auto.scores.detection.recall? - full.scores.detection.recall?) * 100.0;
    let verdict = if points >= -2.0 { "kept" } else { "NOT kept" };
    Some(format!(
        "\nChange-aware sampling (auto) against full: recall {points:+.1} points; the goal (within 2 points) is {verdict}.\n"
    ))
}

fn flag(flagged: bool) -> &'static str {
    if flagged {
        "flagged"
    } else {
        "passed"
    }
}

fn delta(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) => format!("{:+.1}", (b - a) * 100.0),
        _ => "–".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(sampling: &str, recall: f64) -> RunReport {
        let mut report = RunReport {
            sampling: sampling.into(),
            ..Default::default()
        };
        report.scores.detection.recall = Some(recall);
        report
    }

    #[test]
    fn the_sampling_goal_is_judged_in_either_order_and_only_for_full_against_auto() {
        let lost = sampling_goal(&run("full", 0.80), &run("auto", 0.775)).unwrap();
        assert!(
            lost.contains("-2.5 points") && lost.contains("NOT kept"),
            "{lost}"
        );
        let kept = sampling_goal(&run("auto", 0.79), &run("full", 0.80)).unwrap();
        assert!(
            kept.contains("-1.0 points") && kept.contains("is kept"),
            "{kept}"
        );
        assert!(sampling_goal(&run("full", 0.8), &run("full", 0.5)).is_none());
        assert!(compare(&run("full", 0.80), &run("auto", 0.5)).contains("NOT kept"));
    }
}
