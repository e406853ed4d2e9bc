//! Writing a plan from requirements: Vaider opens the app at `baseUrl` in the local browser and
//! sends its first page (the screenshot, with the page's text and elements in the prompt), the
//! requirements and context chosen from the code base through the one pipeline, asking for the
//! plan's JSON schema. Seeing the running app lets the model use selectors the page really has.
//! The answer is checked against the step shapes; an invalid one goes back once with its
//! errors, then is reported.

use std::path::Path;

use serde_json::{json, Value};
use vaider_core::analysis::{AnalysisRequest, Door};
use vaider_core::progress::NoProgress;
use vaider_core::Vaider;

use crate::check::plan_problems;
use crate::context::PlanContext;
use crate::error::{ErrorCode, QaError};
use crate::plan::TestStep;

/// The most of the first page's text the model is given.
const MAX_PAGE_TEXT: usize = 4_000;

/// What the model is asked to write a plan for.
pub struct Brief<'a> {
    pub requirements: &'a str,
    pub base_url: &'a str,
    pub context: &'a PlanContext,
    pub page_text: &'a str,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub door: Door,
    pub parent_id: Option<String>,
}

/// The model's plan: its name, summary and checked steps.
#[derive(Debug)]
pub struct Written {
    pub name: String,
    pub summary: String,
    pub steps: Vec<TestStep>,
}

/// Asks the model for a plan (twice at most) looking at `screenshot`, the app's first page.
pub async fn write_plan(
    engine: &Vaider,
    brief: &Brief<'_>,
    screenshot: &Path,
    project: &Path,
) -> Result<Written, QaError> {
    let mut calls = Vec::new();
    let mut problems: Vec<String> = Vec::new();
    for _attempt in 0..2 {
        let answer = ask(engine, brief, screenshot, project, &problems).await?;
        calls.push(answer.1);
        match read_plan(&answer.0) {
            Ok((name, summary, steps)) => {
                return Ok(Written {
                    name,
                    summary,
                    steps,
                })
            }
            Err(found) => problems = found,
        }
    }
    Err(QaError::new(
        ErrorCode::ModelError,
        format!(
            "the model's plan was invalid twice (it was sent the errors once): {}. Try again, or another model (the `model` argument)",
            problems.join("; ")
        ),
    )
    .with_details(json!({ "errors": problems, "historyIds": calls })))
}

/// One model call; the answer's structured fields and its history id.
async fn ask(
    engine: &Vaider,
    brief: &Brief<'_>,
    screenshot: &Path,
    project: &Path,
    problems: &[String],
) -> Result<(Value, String), QaError> {
    let mut request = AnalysisRequest::new(
        crate::tasks::GENERATE_PLAN,
        brief.door,
        screenshot.display().to_string(),
    );
    request.prompt = Some(prompt(brief, problems));
    request.provider = brief.provider.clone();
    request.model = brief.model.clone();
    request.parent_id = brief.parent_id.clone();
    request.base_dirs = vec![project.to_path_buf()];
    let result = engine
        .analyse(request, &NoProgress)
        .await
        .map_err(|failure| QaError::new(ErrorCode::ModelError, failure.error.to_string()))?;
    Ok((result.details.unwrap_or_default(), result.interaction_id))
}

/// The requirements, the base URL, the first page's text, the code base's context and, on the
/// second try, what was wrong with the first answer.
fn prompt(brief: &Brief<'_>, problems: &[String]) -> String {
    let page: String = brief.page_text.trim().chars().take(MAX_PAGE_TEXT).collect();
    let mut text = format!(
        "Write a test plan for these requirements:\n<<<\n{}\n>>>\nThe app runs at {} (the screenshot is its first page; `open` takes paths relative to it).\nThe first page's visible text:\n<<<\n{page}\n>>>\n",
        brief.requirements.trim(),
        brief.base_url
    );
    if !brief.context.text.is_empty() {
        text.push_str(&format!(
            "Context from the code base ({}):\n{}\n",
            brief.context.source, brief.context.text
        ));
    }
    if !problems.is_empty() {
        text.push_str("Your previous plan was refused. Validation errors:\n");
        for problem in problems {
            text.push_str(&format!("- {problem}\n"));
        }
        text.push_str("Write the whole plan again without them.\n");
    }
    text
}

/// The model's flat steps as plan steps, or every problem found.
fn read_plan(answer: &Value) -> Result<(String, String, Vec<TestStep>), Vec<String>> {
    let Some(raw_steps) = answer["steps"].as_array() else {
        return Err(vec!["the answer has no `steps` list".into()]);
    };
    let mut steps = Vec::new();
    let mut problems = Vec::new();
    for (index, raw) in raw_steps.iter().enumerate() {
        match step_of(raw) {
            Ok(step) => steps.push(step),
            Err(e) => problems.push(format!("step {}: {e}", index + 1)),
        }
    }
    let name = answer["name"].as_str().unwrap_or("").trim().to_string();
    let summary = answer["summary"].as_str().unwrap_or("").trim().to_string();
    let plan = crate::plan::TestPlan {
        id: "check".into(),
        name: if name.is_empty() {
            "Test plan".into()
        } else {
            name.clone()
        },
        description: String::new(),
        project: crate::plan::Project {
            name: "check".into(),
            repo_url: None,
            description: None,
        },
        prompt: String::new(),
        base_url: String::new(),
        allowed_hosts: Vec::new(),
        steps: steps.clone(),
        created_at: String::new(),
        updated_at: String::new(),
        context: None,
        secrets: Default::default(),
    };
    problems.extend(plan_problems(&plan));
    match problems.is_empty() {
        true => Ok((name, summary, steps)),
        false => Err(problems),
    }
}

/// One flat step (every type's fields, the unused ones empty) as the contract's step.
fn step_of(raw: &Value) -> Result<TestStep, String> {
    let text = |key: &str| raw[key].as_str().unwrap_or("").trim().to_string();
    let optional = |key: &str| Some(text(key)).filter(|t| !t.is_empty());
    let mut shaped = json!({"id": text("id"), "name": text("name"), "type": text("type")});
    match text("type").as_str() {
        "selenese" => {
            let commands: Vec<Value> = list(raw, "commands")
                .map(|c| {
                    let mut c = c.clone();
                    if c["value"].as_str().is_some_and(str::is_empty) {
                        c.as_object_mut().map(|o| o.remove("value"));
                    }
                    c
                })
                .collect();
            shaped["commands"] = json!(commands);
        }
        "unit_assertion" => {
            let assertions: Vec<Value> = list(raw, "assertions").map(assertion_of).collect();
            shaped["assertions"] = json!(assertions);
        }
        "agentic_assertion" => {
            shaped["instruction"] = json!(text("instruction"));
            shaped["criteria"] = json!(text("criteria"));
            if let Some(context) = optional("context") {
                shaped["context"] = json!(context);
            }
        }
        "agentic_browsing" => {
            shaped["instruction"] = json!(text("instruction"));
            if let Some(outcome) = optional("expectedOutcome") {
                shaped["expectedOutcome"] = json!(outcome);
            }
        }
        other => return Err(format!("{other:?} is not a step type: use selenese, unit_assertion, agentic_assertion or agentic_browsing")),
    }
    serde_json::from_value::<TestStep>(shaped).map_err(|e| format!("not a valid step: {e}"))
}

fn list<'a>(raw: &'a Value, key: &str) -> impl Iterator<Item = &'a Value> {
    raw[key].as_array().into_iter().flatten()
}

/// An assertion with `expected` as the contract types it: a boolean for exists and visible.
fn assertion_of(raw: &Value) -> Value {
    let mut assertion = raw.clone();
    let Some(object) = assertion.as_object_mut() else {
        return assertion;
    };
    for key in ["selector", "property"] {
        if object
            .get(key)
            .and_then(Value::as_str)
            .is_some_and(|s| s.trim().is_empty())
        {
            object.remove(key);
        }
    }
    let boolean = matches!(
        object.get("type").and_then(Value::as_str),
        Some("exists" | "visible")
    );
    if let (true, Some(expected)) = (boolean, object.get("expected").and_then(Value::as_str)) {
        match expected.trim() {
            "true" | "" => object.insert("expected".into(), json!(true)),
            "false" => object.insert("expected".into(), json!(false)),
            _ => None,
        };
    }
    assertion
}

/// A plan id from its name: readable and unique (`login-flow-1f3a…`).
pub fn plan_id(name: &str) -> String {
    let slug = crate::store::project_folder(name);
    let slug: String = slug
        .split('-')
        .filter(|word| !word.is_empty())
        .collect::<Vec<_>>()
        .join("-")
        .chars()
        .take(40)
        .collect();
    let unique = uuid::Uuid::now_v7().simple().to_string();
    format!("{}-{}", slug.trim_matches('-'), &unique[unique.len() - 8..])
        .trim_start_matches('-')
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_steps_become_the_contract_steps() {
        let answer = json!({"name": "Login", "summary": "s", "steps": [
            {"id": "step-1", "name": "open", "type": "selenese",
             "commands": [{"command": "open", "target": "/", "value": ""}],
             "assertions": [], "instruction": "", "criteria": "", "context": "", "expectedOutcome": ""},
            {"id": "step-2", "name": "title", "type": "unit_assertion", "commands": [],
             "assertions": [{"type": "visible", "selector": "h1", "property": "", "expected": "true"}],
             "instruction": "", "criteria": "", "context": "", "expectedOutcome": ""},
            {"id": "step-3", "name": "judge", "type": "agentic_assertion", "commands": [], "assertions": [],
             "instruction": "look", "criteria": "says hi", "context": "", "expectedOutcome": ""}
        ]});
        let (name, _, steps) = read_plan(&answer).unwrap();
        assert_eq!(name, "Login");
        let json = serde_json::to_value(&steps).unwrap();
        assert_eq!(
            json[0],
            json!({"id": "step-1", "name": "open", "type": "selenese", "commands": [{"command": "open", "target": "/"}]})
        );
        assert_eq!(
            json[1]["assertions"][0],
            json!({"type": "visible", "selector": "h1", "expected": true})
        );
        assert_eq!(
            json[2],
            json!({"id": "step-3", "name": "judge", "type": "agentic_assertion", "instruction": "look", "criteria": "says hi"})
        );
    }

    #[test]
    fn an_invalid_answer_gives_every_error() {
        let answer = json!({"name": "x", "steps": [
            {"id": "s1", "name": "a", "type": "clicky"},
            {"id": "s2", "name": "b", "type": "selenese", "commands": [{"command": "hover", "target": "a"}]},
            {"id": "s3", "name": "c", "type": "selenese", "commands": []}
        ]});
        let problems = read_plan(&answer).unwrap_err();
        assert_eq!(problems.len(), 3, "{problems:#?}");
        assert!(problems[0].contains("\"clicky\" is not a step type"));
        assert!(problems[1].starts_with("step 2: not a valid step"));
        assert!(problems[2].contains("at least one command"));
        assert_eq!(
            read_plan(&json!({"oops": 1})).unwrap_err(),
            ["the answer has no `steps` list"]
        );
    }

    #[test]
    fn the_retry_prompt_lists_the_errors() {
        let context = PlanContext {
            source: "/app".into(),
            text: "--- README.md ---\nhi".into(),
            ..Default::default()
        };
        let brief = Brief {
            requirements: "A user can log in",
            base_url: "http://127.0.0.1:1",
            context: &context,
            page_text: "Sign in",
            provider: None,
            model: None,
            door: Door::Cli,
            parent_id: None,
        };
        let first = prompt(&brief, &[]);
        assert!(first.contains("<<<\nA user can log in\n>>>"));
        assert!(first.contains("Context from the code base (/app):\n--- README.md ---"));
        assert!(!first.contains("Validation errors"));
        let second = prompt(&brief, &["step 1: bad".into()]);
        assert!(second.contains("Validation errors:\n- step 1: bad\n"));
        assert!(plan_id("Login flow!").starts_with("login-flow-"));
    }
}
