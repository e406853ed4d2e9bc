//! The model's verdict on a changed capture: one call for the whole change, one verdict per
//! numbered region (`regression`, `intentional` when it matches a declared expected change,
//! `noise`), each with a reason. Asked through the pipeline, so it is in the history and
//! answered from its cache when the same pair (both pictures' bytes, the expected changes and
//! the model) was judged before.

use serde_json::{json, Value};
use vaider_core::analysis::{AnalysisRequest, TaskOptions};
use vaider_core::progress::NoProgress;
use vaider_core::prompts::strict_object;
use vaider_core::task::{Job, Task, TaskMedia, Tool};
use vaider_core::{Door, Vaider};

use super::changes::{PendingChange, RegionVerdict};
use super::{Result, ReviewError};

/// The three verdicts a region can get.
pub const VERDICTS: [&str; 3] = ["regression", "intentional", "noise"];

/// The review's task: the baseline, then the new capture with the changed regions boxed.
pub const REVIEW_VERDICT: Tool = Tool::new(&Task {
    name: "review_verdict",
    media: TaskMedia::TwoImages,
    job: Job::Judge,
    system: Some("Your task: judge each changed region between an approved screenshot (BASELINE, the first image) and a new capture of the same screen (ACTUAL, the second image, where a pixel diff boxed and numbered every changed region). For each numbered region give one verdict: \"intentional\" when the change is one of the changes the developer declared, \"noise\" when it is rendering noise or content that changes on its own (a clock, a counter, an animation frame, anti-aliasing), \"regression\" when something is broken, missing, misplaced or changed without being declared. Give a short reason for each, naming what you see."),
    default_prompt: "Give a verdict for each numbered region.",
    answer: Some(verdict_answer),
    options_note: order_note,
    image_labels: &[
        "BASELINE, the approved screenshot (the first image):",
        "ACTUAL, the new capture with the changed regions boxed and numbered (the second image):",
    ],
    more_images_label: Some(
        "CLOSE-UPS of the changed regions (each row: its number, BASELINE, ACTUAL):",
    ),
});

fn order_note(_: &TaskOptions) -> Option<String> {
    Some("The first image is the approved BASELINE, the second the new ACTUAL capture with the changed regions boxed and numbered.".into())
}

fn verdict_answer() -> Value {
    json!({
        "summary": {"type": "string"},
        "regions": {
            "type": "array",
            "items": strict_object(json!({
                "region": {"type": "integer"},
                "verdict": {"type": "string", "enum": VERDICTS},
                "reason": {"type": "string"}
            }))
        }
    })
}

/// The prompt: the regions, and the changes the developer declared.
pub fn verdict_prompt(change: &PendingChange) -> String {
    let mut text = String::from(
        "The changed regions, boxed and numbered on ACTUAL (x, y, width, height in pixels):\n",
    );
    for r in &change.regions {
        text.push_str(&format!(
            "- region {}: {}, {}, {}x{} ({} changed pixels)\n",
            r.number, r.x, r.y, r.width, r.height, r.changed_pixels
        ));
    }
    if change.expected_changes.is_empty() {
        text.push_str("No change was declared: a region is intentional only if it is plainly noise-free and deliberate; otherwise it is a regression or noise.\n");
    } else {
        text.push_str("The changes the developer declared:\n");
        for expected in &change.expected_changes {
            text.push_str(&format!("- {expected}\n"));
        }
    }
    text
}

/// Asks the model for the verdicts and writes them into the change; what the call cost.
/// `parent_id` is the history entry it is part of (a validation), if any.
pub async fn ask_verdicts(
    engine: &Vaider,
    change: &mut PendingChange,
    door: Door,
    model: Option<String>,
    parent_id: Option<String>,
) -> Result<f64> {
    let annotated = change.annotated.clone().ok_or_else(|| {
        ReviewError("the change has no annotated picture to show the model".into())
    })?;
    let mut request = AnalysisRequest::new(REVIEW_VERDICT, door, annotated.display().to_string());
    request.compare_with = Some(change.baseline.display().to_string());
    request.close_ups = change
        .close_ups
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    request.prompt = Some(verdict_prompt(change));
    request.model = model;
    request.parent_id = parent_id;
    let result = engine.analyse(request, &NoProgress).await.map_err(|failure| {
        ReviewError(format!(
            "the model could not judge the change ({}: {}); the pictures are kept, and a person can decide from them",
            failure.error.code().as_str(),
            failure.error
        ))
    })?;
    let details = result.details.unwrap_or_default();
    change.summary = details["summary"]
        .as_str()
        .map(str::to_string)
        .or(Some(result.description));
    change.verdicts = read_verdicts(&details, change);
    change.interaction_id = Some(result.interaction_id);
    Ok(result.cost_usd)
}

/// One verdict per region, in the regions' order; a region the model skipped or gave an
/// unknown word for counts as a regression, to be looked at.
fn read_verdicts(details: &Value, change: &PendingChange) -> Vec<RegionVerdict> {
    let given = details["regions"].as_array().cloned().unwrap_or_default();
    change
        .regions
        .iter()
        .map(|region| {
            let found = given
                .iter()
                .find(|v| v["region"].as_u64() == Some(u64::from(region.number)));
            let verdict = found
                .and_then(|v| v["verdict"].as_str())
                .filter(|v| VERDICTS.contains(v));
            RegionVerdict {
                region: region.number,
                verdict: verdict.unwrap_or("regression").to_string(),
                reason: match (verdict, found.and_then(|v| v["reason"].as_str())) {
                    (Some(_), Some(reason)) => reason.to_string(),
                    _ => "the model gave no verdict for this region: look at it".into(),
                },
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::RegionData;

    #[test]
    fn a_region_without_a_verdict_counts_as_a_regression() {
        let region = |number| RegionData {
            number,
            x: 0,
            y: 0,
            width: 5,
            height: 5,
            changed_pixels: 25,
        };
        let mut change: PendingChange = serde_json::from_value(json!({
            "id": "0123456789ab", "name": "home", "variant": "1x1", "source": {"kind": "vaider"},
            "status": "changed", "state": "pending", "baseline": "/b.png", "actual": "/a.png",
            "changedPixels": 50, "regions": [], "created": "2026-11-28T18:00:00Z"
        }))
        .unwrap();
        change.regions = vec![region(1), region(2)];
        let details = json!({"regions": [{"region": 1, "verdict": "noise", "reason": "a clock"},
                                          {"region": 2, "verdict": "maybe", "reason": "?"}]});
        let verdicts = read_verdicts(&details, &change);
        assert_eq!(verdicts[0].verdict, "noise");
        assert_eq!(verdicts[0].reason, "a clock");
        assert_eq!(verdicts[1].verdict, "regression");
        assert!(verdict_prompt(&change).contains("region 2"));
    }
}
