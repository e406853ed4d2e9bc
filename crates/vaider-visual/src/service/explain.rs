//! The model's explanation of a comparison, asked through the pipeline: the prompt naming the
//! numbered regions and the expected changes, and the answer read into the contract's
//! `agentic_analysis` and `validation`.

use std::path::Path;

use vaider_core::analysis::AnalysisRequest;
use vaider_core::progress::ProgressSink;
use vaider_core::Vaider;

use super::compare::CompareRequest;
use super::data::{AgenticAnalysis, CompareData, FoundChange, UnexpectedChange, Validation};
use super::CompareError;
use crate::{Comparison, Region};

/// Asks the model, through the pipeline, what changed in each numbered region and whether the
/// expected changes are there.
#[allow(clippy::too_many_arguments)]
pub(super) async fn explain(
    engine: &Vaider,
    request: &CompareRequest<'_>,
    before: &Path,
    annotated: &Path,
    comparison: &Comparison,
    expected: &[String],
    progress: &dyn ProgressSink,
    data: &mut CompareData,
) -> Result<(), CompareError> {
    let mut analysis = AnalysisRequest::new(
        crate::task::VISUAL_COMPARE,
        request.door,
        annotated.display().to_string(),
    );
    analysis.compare_with = Some(before.display().to_string());
    analysis.close_ups = data.close_ups.iter().cloned().collect();
    let zoomed = comparison
        .close_ups
        .as_ref()
        .map(|c| c.regions.as_slice())
        .unwrap_or_default();
    analysis.prompt = Some(explain_prompt(
        &comparison.regions,
        zoomed,
        expected,
        data.size_change.as_deref(),
    ));
    analysis.provider = request.provider.clone();
    analysis.model = request.model.clone();
    analysis.base_dirs = vec![request.project.to_path_buf()];
    let result = engine
        .analyse(analysis, progress)
        .await
        .map_err(|failure| {
            CompareError(format!(
                "the model could not explain the change ({}: {}); the pictures are in {}",
                failure.error.code().as_str(),
                failure.error,
                data.annotated_screenshot
            ))
        })?;
    data.interaction_id = Some(result.interaction_id.clone());
    data.cost_usd = result.cost_usd;
    let details = result.details.unwrap_or_default();
    data.agentic_analysis = read_analysis(&details, &result.description);
    data.validation = validate(&details, expected, &data.agentic_analysis);
    Ok(())
}

fn explain_prompt(
    regions: &[Region],
    zoomed: &[u32],
    expected: &[String],
    size_change: Option<&str>,
) -> String {
    let mut text = String::from("The pixel diff found these changed regions, drawn as numbered boxes on the AFTER image (x, y, width, height in pixels):\n");
    for r in regions {
        text.push_str(&format!(
            "- region {}: {}, {}, {}x{} ({} changed pixels)\n",
            r.number, r.x, r.y, r.width, r.height, r.changed_pixels
        ));
    }
    if !zoomed.is_empty() {
        let list: Vec<String> = zoomed.iter().map(u32::to_string).collect();
        text.push_str(&format!(
            "The last image has close-ups of region{} {}, cut from the screenshots' own pixels and magnified: one row each, its number, then BEFORE, then AFTER, the changed pixels framed. Read small text and exact colours there.\n",
            if zoomed.len() == 1 { "" } else { "s" },
            list.join(", ")
        ));
    }
    if let Some(size) = size_change {
        text.push_str(&format!("Also: {size}.\n"));
    }
    if expected.is_empty() {
        text.push_str("No changes were announced: every change found is unexpected.\n");
    } else {
        text.push_str("The changes the developer expected:\n");
        for change in expected {
            text.push_str(&format!("- {change}\n"));
        }
    }
    text
}

fn strings(value: &serde_json::Value) -> Vec<String> {
    value
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|i| i.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn read_analysis(details: &serde_json::Value, description: &str) -> AgenticAnalysis {
    let changes = |key: &str| details[key].as_array().cloned().unwrap_or_default();
    let text = |v: &serde_json::Value, key: &str| v[key].as_str().unwrap_or_default().to_string();
    AgenticAnalysis {
        summary: details["summary"]
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| description.to_string()),
        found_changes: changes("found_changes")
            .iter()
            .map(|c| FoundChange {
                region: text(c, "region"),
                change: text(c, "change"),
            })
            .collect(),
        unexpected_changes: changes("unexpected_changes")
            .iter()
            .map(|c| UnexpectedChange {
                region: text(c, "region"),
                change: text(c, "change"),
                severity: match c["severity"].as_str() {
                    Some(s @ ("info" | "warning" | "error")) => s.to_string(),
                    _ => "warning".to_string(),
                },
            })
            .collect(),
    }
}

/// Which expected changes were found: the model's word for each, and every expected change it
/// did not name counts as missed.
fn validate(
    details: &serde_json::Value,
    expected: &[String],
    analysis: &AgenticAnalysis,
) -> Validation {
    let matched_by_model = strings(&details["expected_matched"]);
    let matched: Vec<String> = expected
        .iter()
        .filter(|e| {
            matched_by_model
                .iter()
                .any(|m| m.trim().eq_ignore_ascii_case(e.trim()))
        })
        .cloned()
        .collect();
    Validation {
        expected_missed: expected
            .iter()
            .filter(|e| !matched.contains(e))
            .cloned()
            .collect(),
        expected_matched: matched,
        unexpected_found: analysis
            .unexpected_changes
            .iter()
            .map(|c| format!("{}: {}", c.region, c.change))
            .collect(),
        regressions: analysis
            .unexpected_changes
            .iter()
            .any(|c| c.severity == "error"),
    }
}
