//! The failing runs and flaky pairs, run as `validate_test` runs them: a failing run's video
//! and trace become its recording and steps (`recording::of_files`) and its failing step is
//! watched closely (`failure::watch`); a flaky pair's two attempts are compared
//! (`flaky::explain_attempts`). What they named is set beside the labels for the scorer.

use std::path::Path;
use std::sync::Arc;

use vaider_core::progress::NoProgress;
use vaider_core::{Door, Vaider};
use vaider_validate::failure::{self, FailedRun, FailureAnalysis};
use vaider_validate::flaky::{self, AttemptFiles, FlakyAnalysis};
use vaider_validate::recording;
use vaider_validate::report::TestError;
use vaider_validate::video::Asker;

use crate::labels::Item;
use crate::run::{labelled, Options};
use crate::score::{FailureOutcome, FlakyOutcome, Outcome};

type Who = Option<(String, String)>;

fn asker(options: &Options, item: &Item) -> Asker {
    Asker {
        door: Door::Cli,
        parent_id: None,
        provider: options.provider.clone(),
        model: options.model.clone(),
        timeout: None,
        base_dirs: vec![item.dir.clone()],
    }
}

/// A failing run through the failing step's close watch.
pub async fn failing_run(
    engine: &Arc<Vaider>,
    options: &Options,
    item: &Item,
    work: &Path,
    outcome: &mut Outcome,
) -> Who {
    match watch_failure(engine, options, item, work).await {
        Ok(analysis) => {
            read_failure(item, &analysis, outcome);
            tokens_of(engine, &analysis.interaction_id, outcome)
        }
        Err(e) => {
            outcome.error = Some(e);
            None
        }
    }
}

async fn watch_failure(
    engine: &Arc<Vaider>,
    options: &Options,
    item: &Item,
    work: &Path,
) -> Result<FailureAnalysis, String> {
    let video = item.path(&item.media).map_err(|e| e.to_string())?;
    let trace = item.path(&item.trace).map_err(|e| e.to_string())?;
    let screencast = work.join(format!("{}-screencast.webm", item.id));
    let recording = recording::of_files(Some(video), Some(trace), &screencast).await?;
    let failing = recording
        .failing
        .ok_or_else(|| format!("{}: its trace names no step that failed", item.id))?;
    let error = item.error.as_ref().map(|message| TestError {
        message: message.clone(),
        location: None,
    });
    let run = FailedRun {
        title: item.test.as_deref().unwrap_or(&item.id),
        error: error.as_ref(),
        steps: &recording.steps,
        failing,
        video: &recording.video,
    };
    failure::watch(engine, &asker(options, item), run, &NoProgress).await
}

/// The step number in `step 3 'add the chair', 00:04.2`.
pub fn step_number(label: &str) -> Option<u64> {
    let rest = label.trim().strip_prefix("step ")?;
    rest.split(' ').next()?.parse().ok()
}

/// Scores' inputs from the failing step's close watch.
pub fn read_failure(item: &Item, analysis: &FailureAnalysis, outcome: &mut Outcome) {
    labelled(item, outcome);
    let Some(label) = &item.failure else {
        outcome.error = Some(format!("{}: no failure labels", item.id));
        return;
    };
    outcome.failure = Some(FailureOutcome {
        failing_step: label.failing_step.number,
        failing_step_named: analysis.failing_step.as_deref().and_then(step_number),
        first_wrong_steps: label.first_wrong.running.iter().map(|s| s.number).collect(),
        first_wrong_step_named: analysis.first_wrong.as_deref().and_then(step_number),
        first_wrong_at: label.first_wrong.at_s,
        first_wrong_at_named: analysis.first_wrong_at,
        watched: (analysis.watched.from, analysis.watched.to),
        cause: label.cause.clone(),
        cause_named: analysis.cause.clone(),
    });
    outcome.cost_usd = analysis.cost_usd;
    outcome.cached = analysis.cached;
    outcome.answer = crate::run::shorten(&analysis.sentence());
}

/// A flaky pair through the comparison of its attempts.
pub async fn flaky_pair(
    engine: &Arc<Vaider>,
    options: &Options,
    item: &Item,
    work: &Path,
    outcome: &mut Outcome,
) -> Who {
    let files = |n: usize| -> Result<AttemptFiles, String> {
        let a = item
            .attempts
            .get(n)
            .ok_or_else(|| format!("{}: the labels list {} attempts, not 2", item.id, n))?;
        Ok(AttemptFiles {
            number: a.number,
            video: Some(item.dir.join(&a.video)),
            trace: Some(item.dir.join(&a.trace)),
            error: a.error.as_ref().map(|message| TestError {
                message: message.clone(),
                location: None,
            }),
        })
    };
    let (failed, passed) = match (files(0), files(1)) {
        (Ok(f), Ok(p)) => (f, p),
        (Err(e), _) | (_, Err(e)) => {
            outcome.error = Some(e);
            return None;
        }
    };
    let out = work.join(&item.id);
    if let Err(e) = std::fs::create_dir_all(&out) {
        outcome.error = Some(format!("cannot create {}: {e}", out.display()));
        return None;
    }
    let title = item.test.as_deref().unwrap_or(&item.id);
    let analysis = flaky::explain_attempts(
        engine,
        &asker(options, item),
        title,
        &failed,
        &passed,
        &out,
        &NoProgress,
    )
    .await;
    read_flaky(item, &analysis, outcome);
    let seen = analysis.failed_attempt.as_ref();
    match seen {
        Some(seen) => tokens_of(engine, &seen.interaction_id, outcome),
        None => None,
    }
}

/// Scores' inputs from a flaky pair's comparison: the step where they parted, and whether a
/// difference of the labelled kind was named.
pub fn read_flaky(item: &Item, analysis: &FlakyAnalysis, outcome: &mut Outcome) {
    labelled(item, outcome);
    let Some(label) = &item.flaky else {
        outcome.error = Some(format!("{}: no flaky labels", item.id));
        return;
    };
    outcome.flaky = Some(FlakyOutcome {
        parted_at: label.parted_at.number,
        parted_at_named: analysis.diverged_at.as_deref().and_then(step_number),
        kind: label.kind.clone(),
        kind_named: kind_named(&label.kind, &label.words, analysis),
        differences: analysis.differences.clone(),
    });
    outcome.cost_usd = analysis.cost_usd;
    outcome.cached = analysis.failed_attempt.as_ref().is_some_and(|f| f.cached);
    outcome.answer = crate::run::shorten(&analysis.differences.join(" · "));
}

/// Whether the comparison named a difference of `kind`: a step's time (timing), console
/// errors or network failures one attempt had and the other not, or, for the screen, one of
/// the labelled words in what the model said either attempt's screen showed.
pub fn kind_named(kind: &str, words: &[String], analysis: &FlakyAnalysis) -> bool {
    let said = |needle: &str| analysis.differences.iter().any(|d| d.contains(needle));
    match kind {
        "timing" => analysis
            .differences
            .iter()
            .any(|d| d.contains(" took ") && d.contains(" s in attempt ")),
        "console" => said("had console errors that attempt"),
        "network" => said("had network failures that attempt"),
        "screen" => {
            let seen = analysis
                .failed_attempt
                .iter()
                .flat_map(|f| [&f.screen_at_failure, &f.cause])
                .chain(analysis.passed_attempt_screen.iter())
                .chain(analysis.differences.iter())
                .map(|t| t.to_lowercase())
                .collect::<Vec<_>>()
                .join(" ");
            words.iter().any(|w| seen.contains(&w.to_lowercase()))
        }
        _ => false,
    }
}

/// The tokens of the model call `id` (the failing step's watch), and who answered it.
fn tokens_of(engine: &Vaider, id: &str, outcome: &mut Outcome) -> Who {
    let entry = engine.history().get(id).ok().flatten()?;
    outcome.input_tokens = entry.input_tokens;
    outcome.output_tokens = entry.output_tokens;
    Some((entry.provider, entry.model))
}
