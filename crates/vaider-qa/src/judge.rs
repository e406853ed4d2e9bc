//! An `agentic_assertion`: the page's screenshot and visible text go through Vaider's one
//! pipeline (history, cache, cost) to the vision model with the step's criteria, and come back
//! as `{passed, reasoning, confidence}`, kept on the step.

use std::path::Path;

use vaider_core::analysis::{AnalysisRequest, Door};
use vaider_core::progress::NoProgress;
use vaider_core::Vaider;

/// The most of the page's text the model is given (a long page's text is cut, said so).
const MAX_PAGE_TEXT: usize = 6_000;

/// The model's judgement of the page.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgement {
    pub passed: bool,
    pub reasoning: String,
    pub confidence: f64,
    /// The history entry of the call.
    pub interaction_id: String,
}

/// What the model is asked to judge.
pub struct Question<'a> {
    pub instruction: &'a str,
    pub criteria: &'a str,
    pub context: Option<&'a str>,
    pub page_text: &'a str,
    /// The plan's secret values: kept out of the recorded answer, should the model repeat
    /// one it read off the screenshot.
    pub secrets: Vec<String>,
}

/// Asks the model whether the page in `screenshot` meets the criteria.
pub async fn judge_page(
    engine: &Vaider,
    screenshot: &Path,
    question: &Question<'_>,
    project: &Path,
    (door, parent_id): (Door, Option<String>),
) -> Result<Judgement, String> {
    let mut request = AnalysisRequest::new(
        crate::tasks::JUDGE_PAGE,
        door,
        screenshot.display().to_string(),
    );
    request.parent_id = parent_id;
    request.prompt = Some(prompt(question));
    request.base_dirs = vec![project.to_path_buf()];
    let secrets = question.secrets.clone();
    request.redact = vaider_core::redact::Redactor::new(move |_| secrets.clone());
    // A page judged again after a fix must be looked at again, not answered from the cache.
    request.no_cache = true;
    let result = engine
        .analyse(request, &NoProgress)
        .await
        .map_err(|failure| format!("MODEL_ERROR: {}", failure.error))?;
    let details = result.details.unwrap_or_default();
    let passed = details["passed"].as_bool().ok_or_else(|| {
        "MODEL_ERROR: the model's answer has no `passed`: the judgement is unknown".to_string()
    })?;
    Ok(Judgement {
        passed,
        reasoning: details["reasoning"]
            .as_str()
            .map(str::to_string)
            .unwrap_or(result.description),
        confidence: details["confidence"]
            .as_f64()
            .unwrap_or(0.0)
            .clamp(0.0, 1.0),
        interaction_id: result.interaction_id,
    })
}

/// The instruction, the criteria (on a line of their own), the context, and the page's text
/// between `<<<` and `>>>`.
fn prompt(question: &Question<'_>) -> String {
    let mut text = question.page_text.trim().to_string();
    let cut = text.chars().count() > MAX_PAGE_TEXT;
    if cut {
        text = text.chars().take(MAX_PAGE_TEXT).collect();
    }
    let mut prompt = format!(
        "{}\nCriteria: {}\n",
        question.instruction.trim(),
        question.criteria.trim().replace('\n', " ")
    );
    if let Some(context) = question.context.map(str::trim).filter(|c| !c.is_empty()) {
        prompt.push_str(&format!("Context: {context}\n"));
    }
    prompt.push_str(&format!(
        "The page's visible text{}:\n<<<\n{text}\n>>>",
        if cut { " (its start)" } else { "" }
    ));
    prompt
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prompt_puts_the_criteria_on_one_line_and_fences_the_page_text() {
        let long = "x".repeat(MAX_PAGE_TEXT + 10);
        let text = prompt(&Question {
            instruction: "Check the greeting.",
            criteria: "it says\n\"Welcome, Ada\"",
            context: Some("after login"),
            page_text: &long,
            secrets: Vec::new(),
        });
        assert!(
            text.contains("\nCriteria: it says \"Welcome, Ada\"\n"),
            "{text}"
        );
        assert!(text.contains("Context: after login\n"));
        assert!(text.contains("(its start):\n<<<\n"));
        assert!(text.ends_with(&format!("{}\n>>>", "x".repeat(10))));
    }
}
