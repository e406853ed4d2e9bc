//! Visual comparison's model task: explaining each changed region of a pixel diff, and which
//! of the developer's expected changes are seen. Its words and answer shape live here, with
//! the capability, not in the core.

use serde_json::{json, Value};
use vaider_core::analysis::TaskOptions;
use vaider_core::prompts::{object_array, strict_object};
use vaider_core::task::{Job, Task, TaskMedia, Tool};

/// The explanation of a visual comparison (before, and after with the changed regions boxed
/// and numbered, then close-ups of the regions), asked by `visual_compare`.
pub const VISUAL_COMPARE: Tool = Tool::new(&Task {
    name: "visual_compare",
    media: TaskMedia::TwoImages,
    job: Job::Compare,
    system: Some("Your task: explain what changed between two screenshots of the same UI, BEFORE (the first image) and AFTER (the second), where a pixel diff boxed and numbered every changed region on AFTER. For each numbered region say what changed in plain words (moved, resized, recoloured, text changed, appeared, disappeared; with sizes in pixels where you can tell). Then match the changes the developer expected against what you found: an expected change is matched only when you see it. Every change nobody expected is unexpected: its severity is error when something is broken, missing or wrong, warning when it is visible but may be harmless, info when it is cosmetic. Name regions as \"region N\"."),
    default_prompt: "Explain what changed in each numbered region, and which expected changes you see.",
    answer: Some(compare_answer),
    options_note: order_note,
    image_labels: &[
        "BEFORE (the first image):",
        "AFTER, the changed regions boxed and numbered (the second image):",
    ],
    more_images_label: Some(
        "CLOSE-UPS of the changed regions (each row: its number, BEFORE, AFTER):",
    ),
});

fn order_note(_: &TaskOptions) -> Option<String> {
    Some(
        "The first image is BEFORE, the second AFTER with the changed regions boxed and numbered."
            .to_string(),
    )
}

fn compare_answer() -> Value {
    let strings = json!({"type": "array", "items": {"type": "string"}});
    json!({
        "summary": {"type": "string"},
        "found_changes": object_array(&[("region", "string"), ("change", "string")]),
        "unexpected_changes": {
            "type": "array",
            "items": strict_object(json!({
                "region": {"type": "string"},
                "change": {"type": "string"},
                "severity": {"type": "string", "enum": ["info", "warning", "error"]}
            }))
        },
        "expected_matched": strings,
        "expected_missed": strings
    })
}
