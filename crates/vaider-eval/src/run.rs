//! Runs the set through Vaider's normal pipeline: each recording through the video analysis
//! (with the item's expectations and the eval prompt), each screenshot pair through the visual
//! compare (with the item's expected changes), each failing run through the failing step's
//! close watch and each flaky pair through the comparison of its attempts (`failures`). Every
//! finished item is appended to
//! `items.jsonl` in the output folder at once, so an interrupted run resumes where it stopped;
//! the engine's own cache answers a repeated request (same bytes, prompt and model) for free.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use vaider_core::analysis::{tools, AnalysisResult, Verdict};
use vaider_core::progress::NoProgress;
use vaider_core::sampling::VideoSampling;
use vaider_core::{AnalysisRequest, Door, Vaider};
use vaider_visual::service::{self, CompareData, CompareRequest};
use vaider_visual::CompareOptions;

use crate::classify;
use crate::labels::{self, Box2, Item, Kind, Truth};
pub use crate::score::Outcome;
use crate::score::{self, Scores, VerdictOutcome};

/// What `vaider eval` was asked.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The set's folder (holding manifest.json).
    pub set: PathBuf,
    /// Where items.jsonl, report.json and report.md go.
    pub out: PathBuf,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub sampling: Option<VideoSampling>,
    pub only: Option<String>,
    pub limit: Option<usize>,
    /// Keep the items already in out/items.jsonl and run only the others.
    pub resume: bool,
    /// A prompt variant for the recordings, in place of [`RECORDING_PROMPT`]: its name (for
    /// the report) and its text, which must still ask for the `DEFECTS:` line.
    pub prompt: Option<(String, String)>,
}

/// A whole run: what was asked, every item's outcome and the scores.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    pub version: u32,
    pub started_at: String,
    pub finished_at: String,
    pub provider: String,
    pub model: String,
    pub sampling: String,
    /// The recordings' prompt: `default` or the variant's name.
    #[serde(default)]
    pub prompt: String,
    pub set: String,
    pub only: Option<String>,
    pub limit: Option<usize>,
    pub scores: Scores,
    pub items: Vec<Outcome>,
}

/// The prompt of every recording: describe, then name the defects on one line.
pub const RECORDING_PROMPT: &str = "You are checking a short recording of a web app for visible GUI defects. Describe what happens step by step, with timestamps (mm:ss). Then end with one line that starts with `DEFECTS:` and lists the defects you saw, comma-separated, each with the moment it shows in brackets, using only these names: text-overflow (text cut off or spilling out of its box), overlap (one element covers another), wrong-text (a wrong or misspelt text), missing-extra-element (an element missing or one too many), wrong-colour-state (a wrong colour or state), layout-shift (content jumps after loading), flash-error-toast (an error shown briefly), endless-spinner (loading never ends), wrong-page (the app lands on the wrong page), unmentioned-change (a change the expectations do not mention). Example: `DEFECTS: overlap [00:02]`. Write `DEFECTS: none` when nothing is wrong.";

/// Runs the selected items one after another and writes the reports.
pub async fn run(
    engine: &Arc<Vaider>,
    options: &Options,
    mut on_item: impl FnMut(usize, usize, &Outcome),
) -> Result<RunReport> {
    let items = labels::select(
        labels::load(&options.set)?,
        options.only.as_deref(),
        options.limit,
    )?;
    let (journal, mut done) = open_journal(options)?;
    done.retain(|o| items.iter().any(|i| i.id == o.id));
    let started_at = chrono::Utc::now().to_rfc3339();
    let work = options.out.join("compare-work");
    let mut seen = (String::new(), String::new());
    let total = items.len();
    for (n, item) in items.iter().enumerate() {
        if let Some(kept) = done.iter().find(|o| o.id == item.id) {
            on_item(n + 1, total, kept);
            continue;
        }
        let (outcome, who) = run_item(engine, options, item, &work).await;
        if let Some(who) = who {
            seen = who;
        }
        append(&journal, &outcome)?;
        on_item(n + 1, total, &outcome);
        done.push(outcome);
    }
    let outcomes: Vec<Outcome> = items
        .iter()
        .filter_map(|i| done.iter().find(|o| o.id == i.id).cloned())
        .collect();
    let report = report_of(engine, options, started_at, seen, outcomes);
    crate::report::write(&report, &options.out)?;
    crate::report::keep_for_history(&report, engine.data_dir())?;
    Ok(report)
}

/// The out folder's journal of finished items: kept when resuming (so finished items are not
/// asked again), emptied otherwise.
fn open_journal(options: &Options) -> Result<(PathBuf, Vec<Outcome>)> {
    std::fs::create_dir_all(&options.out)
        .with_context(|| format!("cannot create {}", options.out.display()))?;
    let journal = options.out.join("items.jsonl");
    if options.resume {
        let done = read_journal(&journal);
        return Ok((journal, done));
    }
    std::fs::write(&journal, b"").with_context(|| format!("cannot write {}", journal.display()))?;
    Ok((journal, Vec::new()))
}

/// The run's report: the provider and model that answered (or, when none did, those asked
/// for), the options it ran with and the scores of its outcomes.
fn report_of(
    engine: &Vaider,
    options: &Options,
    started_at: String,
    (provider, model): (String, String),
    outcomes: Vec<Outcome>,
) -> RunReport {
    let config = engine.config();
    RunReport {
        version: 1,
        started_at,
        finished_at: chrono::Utc::now().to_rfc3339(),
        provider: non_empty(
            provider,
            options.provider.clone().unwrap_or(config.provider.clone()),
        ),
        model: non_empty(model, options.model.clone().unwrap_or(config.model.clone())),
        sampling: options
            .sampling
            .map(|s| format!("{s:?}").to_lowercase())
            .unwrap_or_else(|| "config".into()),
        prompt: options
            .prompt
            .as_ref()
            .map(|(name, _)| name.clone())
            .unwrap_or_else(|| "default".into()),
        set: options.set.display().to_string(),
        only: options.only.clone(),
        limit: options.limit,
        scores: score::score(&outcomes),
        items: outcomes,
    }
}

fn non_empty(seen: String, asked: String) -> String {
    if seen.is_empty() {
        asked
    } else {
        seen
    }
}

fn read_journal(path: &Path) -> Vec<Outcome> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str::<Outcome>(line).ok())
        .filter(|o| o.error.is_none())
        .collect()
}

fn append(path: &Path, outcome: &Outcome) -> Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    writeln!(file, "{}", serde_json::to_string(outcome)?)?;
    Ok(())
}

type Who = Option<(String, String)>;

async fn run_item(
    engine: &Arc<Vaider>,
    options: &Options,
    item: &Item,
    work: &Path,
) -> (Outcome, Who) {
    let mut outcome = Outcome {
        id: item.id.clone(),
        kind: Some(item.kind),
        classes: item.classes.clone(),
        ..Default::default()
    };
    let started = Instant::now();
    let who = match item.kind {
        Kind::Recording => recording(engine, options, item, &mut outcome).await,
        Kind::Pair => pair(engine, options, item, work, &mut outcome).await,
        Kind::Failure => {
            crate::failures::failing_run(engine, options, item, work, &mut outcome).await
        }
        Kind::Flaky => crate::failures::flaky_pair(engine, options, item, work, &mut outcome).await,
    };
    outcome.latency_ms = started.elapsed().as_millis() as u64;
    (outcome, who)
}

async fn recording(
    engine: &Arc<Vaider>,
    options: &Options,
    item: &Item,
    outcome: &mut Outcome,
) -> Who {
    let path = match item.path(&item.media) {
        Ok(path) => path,
        Err(e) => {
            outcome.error = Some(e.to_string());
            return None;
        }
    };
    let mut request =
        AnalysisRequest::new(tools::ANALYZE_VIDEO, Door::Cli, path.display().to_string());
    request.prompt = Some(match &options.prompt {
        Some((_, text)) => text.clone(),
        None => RECORDING_PROMPT.into(),
    });
    request.expectations = item.expectations.iter().map(|e| e.text.clone()).collect();
    request.provider = options.provider.clone();
    request.model = options.model.clone();
    request.sampling = options.sampling;
    request.base_dirs = vec![item.dir.clone()];
    match engine.analyse(request, &NoProgress).await {
        Ok(result) => {
            read_recording(item, &result, outcome);
            Some((result.provider.clone(), result.model.clone()))
        }
        Err(failure) => {
            outcome.error = Some(failure.to_string());
            None
        }
    }
}

/// Scores' inputs from a recording's analysis: the `DEFECTS:` line, the verdicts, and the
/// moments named on that line or in the evidence of an expectation judged not met.
pub fn read_recording(item: &Item, result: &AnalysisResult, outcome: &mut Outcome) {
    labelled(item, outcome);
    let named = classify::defects_line(&result.description).unwrap_or_default();
    outcome.verdicts = item
        .expectations
        .iter()
        .enumerate()
        .map(|(i, e)| VerdictOutcome {
            expectation: e.text.clone(),
            truth: e.truth,
            answer: result.expectations.get(i).and_then(|v| match v.verdict {
                Verdict::Met => Some(Truth::Met),
                Verdict::NotMet => Some(Truth::NotMet),
                Verdict::Unclear => None,
            }),
        })
        .collect();
    let not_met: Vec<&str> = result
        .expectations
        .iter()
        .filter(|v| v.verdict == Verdict::NotMet)
        .map(|v| v.evidence.as_str())
        .collect();
    outcome.flagged = !named.is_empty() || !not_met.is_empty();
    outcome.predicted = named;
    if outcome.flagged && outcome.predicted.is_empty() {
        outcome.predicted = vec!["unknown".into()];
    }
    let defects_line = result
        .description
        .lines()
        .filter(|l| l.to_ascii_uppercase().contains("DEFECTS:"))
        .collect::<Vec<_>>()
        .join(" ");
    let moments: Vec<f64> = std::iter::once(defects_line.as_str())
        .chain(not_met)
        .flat_map(classify::timestamps)
        .collect();
    outcome.localised = item
        .place
        .as_ref()
        .and_then(|p| p.time)
        .filter(|_| !item.is_control())
        .map(|t| {
            // A second either side: answers give whole seconds, and a flash lasts under one.
            outcome.flagged
                && moments
                    .iter()
                    .any(|m| *m >= t.start_s - 1.0 && *m <= t.end_s + 1.0)
        });
    outcome.input_tokens = result.usage.input_tokens;
    outcome.output_tokens = result.usage.output_tokens;
    outcome.cost_usd = result.cost_usd;
    outcome.cached = result.cached;
    outcome.answer = shorten(&result.description);
}

async fn pair(
    engine: &Arc<Vaider>,
    options: &Options,
    item: &Item,
    work: &Path,
    outcome: &mut Outcome,
) -> Who {
    let (before, after) = match (item.path(&item.before), item.path(&item.after)) {
        (Ok(b), Ok(a)) => (b, a),
        (Err(e), _) | (_, Err(e)) => {
            outcome.error = Some(e.to_string());
            return None;
        }
    };
    let request = CompareRequest {
        project: work,
        before: &before,
        after: &after,
        expected_changes: item.expectations.iter().map(|e| e.text.clone()).collect(),
        provider: options.provider.clone(),
        model: options.model.clone(),
        door: Door::Cli,
        options: CompareOptions::default(),
    };
    match service::compare_screenshots(engine, request, &NoProgress).await {
        Ok(data) => {
            read_pair(item, &data, outcome);
            let entry = data
                .interaction_id
                .as_deref()
                .and_then(|id| engine.history().get(id).ok().flatten());
            entry.map(|e| {
                outcome.input_tokens = e.input_tokens;
                outcome.output_tokens = e.output_tokens;
                outcome.cached = e.cached;
                (e.provider, e.model)
            })
        }
        Err(e) => {
            outcome.error = Some(e.to_string());
            None
        }
    }
}

/// Scores' inputs from a visual compare: its unexpected changes (classed by keywords), the
/// expected changes it matched or missed, and the diff regions its unexpected changes name.
pub fn read_pair(item: &Item, data: &CompareData, outcome: &mut Outcome) {
    labelled(item, outcome);
    let v = &data.validation;
    outcome.verdicts = pair_verdicts(item, data);
    let unexpected = &data.agentic_analysis.unexpected_changes;
    outcome.flagged = !unexpected.is_empty() || !v.expected_missed.is_empty();
    outcome.predicted = predicted_classes(data, outcome.flagged);
    outcome.localised = localised(item, data);
    outcome.cost_usd = data.cost_usd;
    let changes: Vec<String> = unexpected
        .iter()
        .map(|c| format!("UNEXPECTED {}: {}", c.region, c.change))
        .collect();
    outcome.answer = shorten(&format!(
        "{} {}",
        data.agentic_analysis.summary,
        changes.join(" ")
    ));
}

/// Each labelled expectation beside the comparison's answer for it (matched, missed, or not
/// mentioned).
fn pair_verdicts(item: &Item, data: &CompareData) -> Vec<VerdictOutcome> {
    let v = &data.validation;
    item.expectations
        .iter()
        .map(|e| VerdictOutcome {
            expectation: e.text.clone(),
            truth: e.truth,
            answer: if v.expected_matched.contains(&e.text) {
                Some(Truth::Met)
            } else if v.expected_missed.contains(&e.text) {
                Some(Truth::NotMet)
            } else {
                None
            },
        })
        .collect()
}

/// The classes the unexpected changes' words name; "unknown" when the pair was flagged but
/// no class is named.
fn predicted_classes(data: &CompareData, flagged: bool) -> Vec<String> {
    let mut predicted: Vec<String> = data
        .agentic_analysis
        .unexpected_changes
        .iter()
        .map(|c| {
            classify::by_keywords(&format!("{} {}", c.region, c.change))
                .unwrap_or("unknown")
                .to_string()
        })
        .collect();
    predicted.sort();
    predicted.dedup();
    if flagged && predicted.is_empty() {
        predicted.push("unknown".into());
    }
    predicted
}

/// Whether a region the model named as unexpected overlaps the labelled place of the bug
/// (None for controls and items without a labelled region).
fn localised(item: &Item, data: &CompareData) -> Option<bool> {
    let named: Vec<u32> = data
        .agentic_analysis
        .unexpected_changes
        .iter()
        .flat_map(|c| classify::region_numbers(&c.region))
        .collect();
    let label = item.place.as_ref().and_then(|p| p.region)?;
    if item.is_control() {
        return None;
    }
    Some(
        data.regions
            .iter()
            .filter(|r| named.contains(&r.number))
            .any(|r| {
                label.intersects(&Box2 {
                    x: r.x as i64,
                    y: r.y as i64,
                    width: r.width as i64,
                    height: r.height as i64,
                })
            }),
    )
}

/// The item's own side of the outcome: its id, kind and labelled classes.
pub(crate) fn labelled(item: &Item, outcome: &mut Outcome) {
    outcome.id = item.id.clone();
    outcome.kind = Some(item.kind);
    outcome.classes = item.classes.clone();
}

pub(crate) fn shorten(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(600) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// A rough token and cost estimate before a run, to ask before an expensive one: a second
/// of video is about 300 tokens (a frame and its audio), a pair about 2 000 (three pictures
/// and the prompt), and an answer about 400.
pub fn estimate(engine: &Vaider, items: &[Item], model: &str) -> (u64, f64) {
    let mut input = 0u64;
    for item in items {
        input += match item.kind {
            Kind::Recording => 800 + (300.0 * item.duration_s.unwrap_or(4.0)).ceil() as u64,
            Kind::Pair => 2_000,
            // The failing stretch (about 3 s at 8 frames a second) and the steps; a flaky
            // pair is two such calls.
            Kind::Failure => 3_000,
            Kind::Flaky => 6_000,
        };
    }
    let output = items
        .iter()
        .map(|i| if i.kind == Kind::Flaky { 800 } else { 400 })
        .sum::<u64>();
    let usage = vaider_core::analysis::Usage {
        input_tokens: input,
        output_tokens: output,
        ..Default::default()
    };
    let cost = vaider_core::cost::cost_usd(&engine.config(), model, usage);
    (input + output, cost)
}
