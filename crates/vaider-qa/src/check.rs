//! Checks a plan before it is saved or run: what the JSON shape cannot say (a step with no
//! commands, a `type` command with nothing to type, an assertion with no selector, two steps
//! with one id). A generated plan that fails goes back to the model once with these errors; a
//! plan written by hand is refused with them, before any browser starts.

use crate::plan::{Assertion, AssertionKind, Command, SeleneseCommand, StepKind, TestPlan};

/// The longest an `agentic_browsing` step may take.
pub const MAX_BROWSE_TIMEOUT_MS: u64 = 600_000;

/// Every problem of the plan, one sentence each naming the step; empty when it can run.
pub fn plan_problems(plan: &TestPlan) -> Vec<String> {
    let mut problems = Vec::new();
    if plan.steps.is_empty() {
        problems.push("the plan has no steps: give it at least one".to_string());
    }
    if plan.name.trim().is_empty() {
        problems.push("the plan has no name".to_string());
    }
    let mut seen = std::collections::HashSet::new();
    for (index, step) in plan.steps.iter().enumerate() {
        let at = format!("step {} ({:?})", index + 1, step.id);
        if !valid_id(&step.id) {
            problems.push(format!(
                "{at}: the id must be letters, digits, '-' or '_' (such as step-{})",
                index + 1
            ));
        } else if !seen.insert(step.id.as_str()) {
            problems.push(format!("{at}: another step has the same id"));
        }
        if step.name.trim().is_empty() {
            problems.push(format!("{at}: the step has no name"));
        }
        problems.extend(
            kind_problems(&step.kind)
                .into_iter()
                .map(|p| format!("{at}: {p}")),
        );
    }
    problems
}

fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

fn kind_problems(kind: &StepKind) -> Vec<String> {
    let blank = |s: &str| s.trim().is_empty();
    match kind {
        StepKind::Selenese { commands } if commands.is_empty() => {
            vec!["a selenese step needs at least one command".into()]
        }
        StepKind::Selenese { commands } => commands
            .iter()
            .enumerate()
            .filter_map(|(i, c)| command_problem(c).map(|p| format!("command {}: {p}", i + 1)))
            .collect(),
        StepKind::UnitAssertion { assertions } if assertions.is_empty() => {
            vec!["a unit_assertion step needs at least one assertion".into()]
        }
        StepKind::UnitAssertion { assertions } => assertions
            .iter()
            .enumerate()
            .filter_map(|(i, a)| assertion_problem(a).map(|p| format!("assertion {}: {p}", i + 1)))
            .collect(),
        StepKind::AgenticAssertion { criteria, .. } if blank(criteria) => {
            vec!["an agentic_assertion needs criteria the page must meet".into()]
        }
        StepKind::AgenticBrowsing { instruction, .. } if blank(instruction) => {
            vec!["an agentic_browsing step needs an instruction".into()]
        }
        StepKind::AgenticBrowsing {
            timeout: Some(ms), ..
        } if *ms > MAX_BROWSE_TIMEOUT_MS => vec![format!(
            "an agentic_browsing step's timeout is at most {MAX_BROWSE_TIMEOUT_MS} ms (10 minutes)"
        )],
        _ => Vec::new(),
    }
}

fn command_problem(command: &Command) -> Option<String> {
    let value = command.value.as_deref().unwrap_or("");
    if command.target.trim().is_empty() {
        return Some(format!(
            "{:?} needs a target (a path for open, else a selector)",
            command.command
        ));
    }
    match command.command {
        SeleneseCommand::Type if value.is_empty() => {
            Some("type needs a value: the text to type".into())
        }
        SeleneseCommand::Press | SeleneseCommand::SendKeys if value.is_empty() => {
            Some("press and sendKeys need a value: the key, or the keys to type".into())
        }
        SeleneseCommand::AssertText if value.is_empty() => {
            Some("assertText needs a value: the text expected".into())
        }
        _ => None,
    }
}

/// An assertion's problem; one without a selector is about the whole page (`body`), as the
/// contract's `selector?` allows.
fn assertion_problem(assertion: &Assertion) -> Option<String> {
    let expected = &assertion.expected;
    match assertion.kind {
        AssertionKind::Exists | AssertionKind::Visible if !expected.is_boolean() => {
            Some("exists and visible expect true or false".into())
        }
        AssertionKind::Matches => match expected.as_str().map(regex::Regex::new) {
            Some(Ok(_)) => None,
            Some(Err(e)) => Some(format!("matches needs a regular expression: {e}")),
            None => Some("matches needs a regular expression as text".into()),
        },
        _ if expected.is_null() => Some("the assertion has no expected value".into()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn plan(steps: serde_json::Value) -> TestPlan {
        serde_json::from_value(json!({
            "id": "p", "name": "Login", "project": {"name": "app"}, "baseUrl": "http://x",
            "steps": steps, "createdAt": "", "updatedAt": ""
        }))
        .unwrap()
    }

    #[test]
    fn a_good_plan_has_no_problems() {
        let good = plan(json!([
            {"id": "s1", "name": "open", "type": "selenese", "commands": [{"command": "open", "target": "/"}]},
            {"id": "s2", "name": "has title", "type": "unit_assertion",
             "assertions": [{"type": "visible", "selector": "h1", "expected": true}]},
            {"id": "s3", "name": "judge", "type": "agentic_assertion", "instruction": "i", "criteria": "c"}
        ]));
        assert_eq!(plan_problems(&good), Vec::<String>::new());
    }

    #[test]
    fn each_problem_names_its_step_and_what_to_give() {
        let bad = plan(json!([
            {"id": "s1", "name": "type", "type": "selenese", "commands": [{"command": "type", "target": "#email"}]},
            {"id": "s1", "name": "", "type": "unit_assertion",
             "assertions": [{"type": "matches", "selector": "h1", "expected": "(("}]},
            {"id": "a b", "name": "x", "type": "selenese", "commands": []},
            {"id": "s4", "name": "x", "type": "unit_assertion",
             "assertions": [{"type": "exists", "selector": "h1", "expected": "yes"}]},
            {"id": "s5", "name": "browse", "type": "agentic_browsing", "instruction": "buy", "timeout": 600_001},
            {"id": "s6", "name": "page", "type": "unit_assertion",
             "assertions": [{"type": "contains", "expected": "Welcome"}]}
        ]));
        let problems = plan_problems(&bad);
        assert_eq!(problems.len(), 8, "{problems:#?}");
        assert!(problems[0].starts_with("step 1 (\"s1\"): command 1: type needs a value"));
        assert!(problems[1].contains("another step has the same id"));
        assert!(problems[2].contains("no name"));
        assert!(problems[3].contains("regular expression"));
        assert!(problems[4].starts_with("step 3 (\"a b\"): the id must be"));
        assert!(problems[5].contains("at least one command"));
        assert!(problems[6].contains("expect true or false"));
        assert!(problems[7].starts_with(
            "step 5 (\"s5\"): an agentic_browsing step's timeout is at most 600000 ms"
        ));
        assert!(plan_problems(&plan(json!([])))
            .contains(&"the plan has no steps: give it at least one".to_string()));
    }
}
