//! The analysis capability's tools: `analyze_video`, `analyze_image`, and the six image tools
//! of the z.ai Vision MCP. Each is a [`Task`]: its words to the model, the shape of its answer
//! and the media it looks at. The pipeline runs them like any other capability's tasks.

use serde_json::{json, Value};

use crate::analysis::TaskOptions;
use crate::prompts::{object_array, strict_object};
use crate::task::{no_options_note, Job, Task, TaskMedia, Tool};

/// Every analysis tool, in the order the docs list them.
pub const ALL: [Tool; 8] = [
    ANALYZE_VIDEO,
    ANALYZE_IMAGE,
    UI_TO_ARTIFACT,
    EXTRACT_TEXT_FROM_SCREENSHOT,
    DIAGNOSE_ERROR_SCREENSHOT,
    UNDERSTAND_TECHNICAL_DIAGRAM,
    ANALYZE_DATA_VISUALIZATION,
    UI_DIFF_CHECK,
];

pub const ANALYZE_VIDEO: Tool = Tool::new(&Task {
    name: "analyze_video",
    media: TaskMedia::Video,
    job: Job::Describe,
    system: None,
    default_prompt: "Describe, step by step, what happens on screen in this recording of a GUI test. \
For each step give the timestamp (mm:ss), what the user did (clicks, typing, navigation) and how the \
screen responded: pages, dialogs, messages, errors, loading states, animations. \
End with one line describing the final state of the screen.",
    answer: None,
    options_note: no_options_note,
    image_labels: &[],
    more_images_label: None,
});

pub const ANALYZE_IMAGE: Tool = Tool::new(&Task {
    name: "analyze_image",
    media: TaskMedia::Image,
    job: Job::Describe,
    system: None,
    default_prompt:
        "Describe this screenshot of a GUI: its layout, the visible text (quoted exactly), \
the controls and their states, and any errors, warnings or visual defects.",
    answer: None,
    options_note: no_options_note,
    image_labels: &[],
    more_images_label: None,
});

pub const UI_TO_ARTIFACT: Tool = Tool::new(&Task {
    name: "ui_to_artifact",
    media: TaskMedia::Image,
    job: Job::Describe,
    system: Some("Your task: turn a UI screenshot into an artifact a developer can use directly: code that reproduces it, a prompt that would generate it, a specification, or a description. Match layout, spacing, colours, typography and text exactly."),
    default_prompt: "Turn this UI into the requested artifact.",
    answer: Some(ui_to_artifact_answer),
    options_note: artifact_note,
    image_labels: &[],
    more_images_label: None,
});

pub const EXTRACT_TEXT_FROM_SCREENSHOT: Tool = Tool::new(&Task {
    name: "extract_text_from_screenshot",
    media: TaskMedia::Image,
    job: Job::Describe,
    system: Some("Your task: transcribe all text in the image exactly, keeping line breaks, indentation and order. For code, keep it runnable: do not fix, reformat or complete it. Mark unreadable characters with [?]."),
    default_prompt: "Extract all the text in this image.",
    answer: Some(extract_text_answer),
    options_note: language_note,
    image_labels: &[],
    more_images_label: None,
});

pub const DIAGNOSE_ERROR_SCREENSHOT: Tool = Tool::new(&Task {
    name: "diagnose_error_screenshot",
    media: TaskMedia::Image,
    job: Job::Describe,
    system: Some("Your task: read the error in the screenshot (message, code, stack trace, the element or line it points at), explain its most likely causes, and give concrete fixes, most likely first."),
    default_prompt: "What is this error, why did it happen, and how do I fix it?",
    answer: Some(diagnose_error_answer),
    options_note: context_note,
    image_labels: &[],
    more_images_label: None,
});

pub const UNDERSTAND_TECHNICAL_DIAGRAM: Tool = Tool::new(&Task {
    name: "understand_technical_diagram",
    media: TaskMedia::Image,
    job: Job::Describe,
    system: Some("Your task: explain the technical diagram: its kind, every component with its role, and every connection with its direction and label, then what the diagram as a whole says."),
    default_prompt: "Explain this diagram.",
    answer: Some(diagram_answer),
    options_note: diagram_note,
    image_labels: &[],
    more_images_label: None,
});

pub const ANALYZE_DATA_VISUALIZATION: Tool = Tool::new(&Task {
    name: "analyze_data_visualization",
    media: TaskMedia::Image,
    job: Job::Describe,
    system: Some("Your task: read the chart or dashboard: its type, axes, units and legend, the values you can read, and the trends, outliers and comparisons that matter. Give numbers as read; say when a value is estimated."),
    default_prompt: "What does this chart show? Give the key findings.",
    answer: Some(data_visualization_answer),
    options_note: focus_note,
    image_labels: &[],
    more_images_label: None,
});

pub const UI_DIFF_CHECK: Tool = Tool::new(&Task {
    name: "ui_diff_check",
    media: TaskMedia::TwoImages,
    job: Job::Compare,
    system: Some("Your task: compare two screenshots of the same UI, EXPECTED (the first image) and ACTUAL (the second). List every visible difference: layout, position, size, colour, text, missing or extra elements. For each, say where, how severe (high: broken or wrong content; medium: clearly visible; low: cosmetic), and how to fix it. Ignore differences in dynamic content such as clocks only when asked."),
    default_prompt: "Compare the expected and the actual UI and list every difference.",
    answer: Some(ui_diff_answer),
    options_note: ui_diff_note,
    image_labels: &["EXPECTED (the first image):", "ACTUAL (the second image):"],
    more_images_label: None,
});

/// `label: value`, when the option was given and is not blank.
fn labelled(label: &str, value: &Option<String>) -> Option<String> {
    let value = value.as_deref().map(str::trim).filter(|v| !v.is_empty())?;
    Some(format!("{label}: {value}"))
}

fn artifact_note(options: &TaskOptions) -> Option<String> {
    let kind = options
        .output_type
        .clone()
        .or_else(|| Some("code".to_string()));
    labelled(
        "Artifact to produce (code, prompt, spec or description)",
        &kind,
    )
}

fn language_note(options: &TaskOptions) -> Option<String> {
    labelled(
        "Programming language of any code",
        &options.programming_language,
    )
}

fn context_note(options: &TaskOptions) -> Option<String> {
    labelled("What the user was doing", &options.context)
}

fn diagram_note(options: &TaskOptions) -> Option<String> {
    labelled("Diagram type", &options.diagram_type)
}

fn focus_note(options: &TaskOptions) -> Option<String> {
    labelled("Focus on", &options.analysis_focus)
}

fn ui_diff_note(_: &TaskOptions) -> Option<String> {
    Some("The first image is EXPECTED, the second ACTUAL.".to_string())
}

fn strings() -> Value {
    json!({"type": "array", "items": {"type": "string"}})
}

fn ui_to_artifact_answer() -> Value {
    json!({
        "output_type": {"type": "string", "enum": ["code", "prompt", "spec", "description"]},
        "artifact": {"type": "string"}
    })
}

fn extract_text_answer() -> Value {
    json!({
        "text": {"type": "string"},
        "language": {"type": "string"}
    })
}

fn diagnose_error_answer() -> Value {
    json!({
        "error_message": {"type": "string"},
        "likely_causes": strings(),
        "suggested_fixes": strings()
    })
}

fn diagram_answer() -> Value {
    json!({
        "diagram_type": {"type": "string"},
        "components": object_array(&[("name", "string"), ("role", "string")]),
        "connections": object_array(&[("from", "string"), ("to", "string"), ("label", "string")])
    })
}

fn data_visualization_answer() -> Value {
    json!({
        "chart_type": {"type": "string"},
        "key_findings": strings(),
        "data_points": object_array(&[("label", "string"), ("value", "string")])
    })
}

fn ui_diff_answer() -> Value {
    json!({
        "matches": {"type": "boolean"},
        "differences": {
            "type": "array",
            "items": strict_object(json!({
                "region": {"type": "string"},
                "description": {"type": "string"},
                "severity": {"type": "string", "enum": ["high", "medium", "low"]},
                "suggested_fix": {"type": "string"}
            }))
        }
    })
}
