//! How each result reads, written once for the two doors that print text: the CLI (the body on
//! stdout, the notes on stderr, so a pipe gets the answer alone) and the MCP tools (the body,
//! then the notes, in the first text block). The JSON doors (REST, the UI's API, `--json`) give
//! the results' own fields instead.

use vaider_core::analysis::{AnalysisResult, Verdict};
use vaider_qa::{service as qa, StepStatus, TestRun};
use vaider_validate::AgentResult;
use vaider_visual::service::{CaptureData, CompareData};

/// A result as text: what it found, then the figures about how it was found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Told {
    pub body: String,
    pub notes: String,
}

impl Told {
    /// Both parts with a blank line between (either may be empty): a tool result's text.
    pub fn whole(&self) -> String {
        let parts = [self.body.trim_end(), self.notes.as_str()];
        let kept: Vec<&str> = parts.into_iter().filter(|p| !p.is_empty()).collect();
        kept.join("\n\n")
    }
}

/// An analysis: the description, a line per expectation with its verdict and the details;
/// the notes say how it was adapted and sampled, which model answered, the time, tokens and
/// cost, and where the record is.
pub fn analysis(result: &AnalysisResult) -> Told {
    let mut body = result.description.trim().to_string();
    if !result.expectations.is_empty() {
        body.push_str("\n\nExpectations:");
        for e in &result.expectations {
            let mark = match e.verdict {
                Verdict::Met => "MET",
                Verdict::NotMet => "NOT MET",
                Verdict::Unclear => "UNCLEAR",
            };
            body.push_str(&format!("\n- [{mark}] {} — {}", e.expectation, e.evidence));
        }
    }
    if let Some(details) = &result.details {
        body.push_str(&format!("\n\nDetails: {details}"));
    }
    Told {
        body,
        notes: analysis_notes(result),
    }
}

/// The sentences of an analysis that are not one of its fields already.
fn analysis_notes(result: &AnalysisResult) -> String {
    let mut notes = Vec::new();
    if !result.adaptations.is_empty() {
        notes.push(format!(
            "Adapted for the provider: {}.",
            result.adaptations.join("; ")
        ));
    }
    if let Some(sampling) = &result.sampling {
        notes.push(format!("{}.", sampling.summary(result.usage.input_tokens)));
    }
    // What the provider counted, with the estimate made before the call beside it.
    let estimated = result
        .usage
        .estimated_input_tokens
        .map(|e| format!(" (estimated {e})"))
        .unwrap_or_default();
    notes.push(format!(
        "{} {}, {} ms, {} in{estimated} / {} out tokens, ${:.6}{}; interactionId {}; log {}.",
        result.provider,
        result.model,
        result.duration_ms,
        result.usage.input_tokens,
        result.usage.output_tokens,
        result.cost_usd,
        if result.cached { ", cached" } else { "" },
        result.interaction_id,
        result.log_dir
    ));
    notes.join(" ")
}

/// A screenshot kept as the next phase.
pub fn capture(data: &CaptureData) -> String {
    let mut text = format!(
        "Phase {} kept: {} ({}x{}, {}).",
        data.phase, data.path, data.dimensions.width, data.dimensions.height, data.platform
    );
    if !data.ignore_regions.is_empty() {
        text.push_str(&format!(
            " {} ignored rectangle(s) kept for comparisons.",
            data.ignore_regions.len()
        ));
    }
    if !data.unmatched_selectors.is_empty() {
        text.push_str(&format!(
            " No drawn element matched: {}.",
            data.unmatched_selectors.join(", ")
        ));
    }
    if let Some(check) = &data.baseline {
        text.push(' ');
        text.push_str(&vaider_visual::review::baseline_sentence(check));
    }
    text
}

/// A comparison: the model's summary and a line per change and per expected change; the
/// notes give the pixel counts, the tally of expectations and the annotated picture.
pub fn comparison(data: &CompareData) -> Told {
    let mut lines = vec![data.agentic_analysis.summary.clone()];
    for change in &data.agentic_analysis.found_changes {
        lines.push(format!("- {}: {}", change.region, change.change));
    }
    for change in &data.agentic_analysis.unexpected_changes {
        lines.push(format!(
            "- UNEXPECTED ({}) {}: {}",
            change.severity, change.region, change.change
        ));
    }
    let v = &data.validation;
    lines.extend(
        v.expected_matched
            .iter()
            .map(|e| format!("- [MATCHED] {e}")),
    );
    lines.extend(v.expected_missed.iter().map(|e| format!("- [MISSED] {e}")));
    let diff = &data.pixel_diff;
    if !data.ignored_regions.is_empty() {
        lines.push(format!(
            "({} region(s) ignored: given or matched by the captures' ignore selectors.)",
            data.ignored_regions.len()
        ));
    }
    let notes = if diff.total_changes == 0 {
        format!("No pixel changed. Annotated: {}", data.annotated_screenshot)
    } else {
        format!(
            "{} changed regions ({} pixels, {:.2} %). Expected and found: {}; expected but missing: {}; unexpected: {}{}. Annotated: {}",
            diff.total_changes,
            diff.changed_pixels,
            diff.diff_percentage,
            v.expected_matched.len(),
            v.expected_missed.len(),
            v.unexpected_found.len(),
            if v.regressions { " (regressions)" } else { "" },
            data.annotated_screenshot
        )
    };
    Told {
        body: lines.join("\n"),
        notes,
    }
}

/// A test plan written and kept; each door adds how to run it there.
pub fn plan_written(name: &str, steps: usize, path: &str) -> String {
    format!("Wrote the plan {name:?} ({steps} steps): {path}")
}

/// A test run: the plan, then a line per step with its status, error, the model's reasoning
/// and evidence; the notes say how it went, naming a failed run's failing step.
pub fn run(run: &TestRun) -> Told {
    let took = vaider_core::job::duration_text(run.duration.unwrap_or(0));
    let mut lines = vec![format!(
        "{} ({}): {:?} in {took}",
        run.plan_name, run.id, run.status
    )];
    for (index, step) in run.step_results.iter().enumerate() {
        let mark = match step.status {
            StepStatus::Passed => "ok  ",
            StepStatus::Failed => "FAIL",
            StepStatus::Error => "ERR ",
            StepStatus::Skipped => "skip",
        };
        lines.push(format!(
            "  {mark} {}. {} ({}, {})",
            index + 1,
            step.step_name,
            step.step_type,
            vaider_core::job::duration_text(step.duration)
        ));
        lines.extend(step.error.iter().map(|e| format!("       {e}")));
        lines.extend(
            step.llm_reasoning
                .iter()
                .map(|r| format!("       model: {r}")),
        );
        lines.extend(
            step.screenshot
                .iter()
                .map(|s| format!("       screenshot: {s}")),
        );
    }
    Told {
        body: lines.join("\n"),
        notes: run_sentence(run),
    }
}

/// How the run went, its time as Playwright prints it; a failed run names its failing step.
fn run_sentence(run: &TestRun) -> String {
    let took = vaider_core::job::duration_text(run.duration.unwrap_or(0));
    let (executed, passed) = qa::tally(run);
    match (&run.error, qa::failing_step(run)) {
        (_, Some(step)) => format!(
            "The run {} failed in {took} ({passed} of {executed} steps passed): {step}",
            run.id
        ),
        (None, None) => format!(
            "The run {} {:?} in {took}: {passed} of {executed} steps passed.",
            run.id, run.status
        ),
        (Some(error), None) => format!(
            "The run {} ended {:?} in {took}: {error}",
            run.id, run.status
        ),
    }
}

/// A validation: what ran (browser, test, time), the screenshots, console errors and network
/// failures, the expectations' verdicts and the rubric's warnings and errors; the notes say
/// whether it passed, at what cost, and where the artifacts are.
pub fn validation(result: &AgentResult) -> Told {
    let v = &result.data["validation_result"];
    let body = if v.is_null() {
        String::new()
    } else {
        validation_lines(result).join("\n")
    };
    let artifacts = result.data["artifacts_dir"].as_str().unwrap_or_default();
    let mut notes = match (&result.error, result.success) {
        (_, true) => format!(
            "The test passed the rubric in {} (cost ${:.4}).",
            vaider_core::job::duration_text(result.execution_time_ms),
            result.cost_usd
        ),
        (Some(error), false) => format!("The test failed the rubric: {error}"),
        (None, false) => "The test failed the rubric.".to_string(),
    };
    if !artifacts.is_empty() {
        notes.push_str(&format!(" Artifacts: {artifacts}"));
    }
    Told { body, notes }
}

fn validation_lines(result: &AgentResult) -> Vec<String> {
    let data = &result.data;
    let v = &data["validation_result"];
    let flag = |key: &str| if v[key] == true { "yes" } else { "no" };
    let mut lines = vec![format!(
        "browser launched: {} · test executed: {} · test passed: {} · {} ms",
        flag("browser_launched"),
        flag("test_executed"),
        flag("test_passed"),
        v["execution_time_ms"]
    )];
    let texts = |value: &serde_json::Value| -> Vec<String> {
        let items = value.as_array().into_iter().flatten();
        items
            .map(|i| i.as_str().unwrap_or_default().to_string())
            .collect()
    };
    for (label, key) in [
        ("screenshot", "screenshots"),
        ("console error", "console_errors"),
        ("network failure", "network_failures"),
    ] {
        lines.extend(
            texts(&v[key])
                .iter()
                .map(|item| format!("- {label}: {item}")),
        );
    }
    let expectations = data["video_analysis"]["expectations"].as_array();
    for e in expectations.into_iter().flatten() {
        lines.push(format!(
            "- [{}] {}",
            e["verdict"].as_str().unwrap_or_default().to_uppercase(),
            e["expectation"].as_str().unwrap_or_default()
        ));
    }
    for f in data["failure_analysis"].as_array().into_iter().flatten() {
        lines.push(failure_line(f));
    }
    for f in data["flaky"].as_array().into_iter().flatten() {
        lines.push(format!(
            "- flaky: {} ({})",
            f["test"].as_str().unwrap_or_default(),
            f["attempts"].as_str().unwrap_or_default()
        ));
        for d in f["differences"].as_array().into_iter().flatten() {
            lines.push(format!("  - {}", d.as_str().unwrap_or_default()));
        }
    }
    for c in data["snapshot_changes"].as_array().into_iter().flatten() {
        let summary = c["summary"].as_str().map(|s| format!(": {s}"));
        lines.push(format!(
            "- snapshot pending review: {} ({}, {} pixels) {}, change {}{}",
            c["name"].as_str().unwrap_or_default(),
            c["status"].as_str().unwrap_or_default(),
            c["changed_pixels"],
            c["snapshot"].as_str().unwrap_or_default(),
            c["id"].as_str().unwrap_or_default(),
            summary.unwrap_or_default()
        ));
    }
    let rubric = &data["rubric_validation"];
    lines.extend(
        texts(&rubric["warnings"])
            .iter()
            .map(|w| format!("warning: {w}")),
    );
    lines.extend(
        texts(&rubric["errors"])
            .iter()
            .map(|e| format!("error: {e}")),
    );
    lines
}

/// A failed test's failing step as the model saw it, in a line.
fn failure_line(f: &serde_json::Value) -> String {
    let text = |key: &str| f[key].as_str().unwrap_or_default();
    let mut line = format!(
        "- failed at {}: {}",
        f["failing_step"].as_str().unwrap_or("an unnamed step"),
        text("screen_at_failure")
    );
    if !text("expected").is_empty() {
        line.push_str(&format!(" (expected: {})", text("expected")));
    }
    if let Some(first) = f["first_wrong"].as_str() {
        line.push_str(&format!("; first wrong at {first}"));
    }
    if !text("cause").is_empty() {
        line.push_str(&format!("; likely cause: {}", text("cause")));
    }
    line
}

/// A test run's analysis: its summary, or why there is none.
pub fn test_results(result: &AgentResult) -> String {
    match result.data["summary"].as_str() {
        Some(summary) => summary.to_string(),
        None => result.error.clone().unwrap_or_else(|| "failed".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_whole_is_both_parts_with_a_blank_line_and_skips_an_empty_one() {
        let told = Told {
            body: "Found.\n".into(),
            notes: "2 ms.".into(),
        };
        assert_eq!(told.whole(), "Found.\n\n2 ms.");
        let notes_only = Told {
            body: String::new(),
            notes: "2 ms.".into(),
        };
        assert_eq!(notes_only.whole(), "2 ms.");
    }
}
