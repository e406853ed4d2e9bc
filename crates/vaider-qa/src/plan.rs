//! The shapes of contracts.md §3, field for field: `TestPlan` with its `TestStep`s (four kinds),
//! and `TestRun` with a `StepResult` per step. Plans written by hand or by another tool in this
//! format are read as they are; unknown fields are ignored.

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TestPlan {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub project: Project,
    /// The requirements the plan was written from, kept for reproducibility.
    #[serde(default)]
    pub prompt: String,
    pub base_url: String,
    /// Hosts the run's browser may reach besides the base URL's origin (Vaider's own field:
    /// `host`, `host:port`, `*.domain`, an origin, or `*` for any public host).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_hosts: Vec<String>,
    pub steps: Vec<TestStep>,
    pub created_at: String,
    pub updated_at: String,
    /// What the model was told about the code base when it wrote the plan (Vaider's own field;
    /// absent from plans written by hand).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<crate::context::PlanContext>,
    /// Secret values by name, each read from an environment variable or a keychain entry at
    /// run time (never written here); a step writes `{{secret:NAME}}` where one is typed.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub secrets: std::collections::BTreeMap<String, crate::secret_values::SecretRef>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Project {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestStep {
    pub id: String,
    pub name: String,
    #[serde(flatten)]
    pub kind: StepKind,
}

/// What a step does; `type` in the JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StepKind {
    AgenticBrowsing {
        instruction: String,
        #[serde(
            rename = "expectedOutcome",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        expected_outcome: Option<String>,
        /// Milliseconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout: Option<u64>,
    },
    Selenese {
        commands: Vec<Command>,
    },
    UnitAssertion {
        assertions: Vec<Assertion>,
    },
    AgenticAssertion {
        instruction: String,
        criteria: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        context: Option<String>,
    },
}

impl StepKind {
    /// `type` as the JSON names it.
    pub fn name(&self) -> &'static str {
        match self {
            StepKind::AgenticBrowsing { .. } => "agentic_browsing",
            StepKind::Selenese { .. } => "selenese",
            StepKind::UnitAssertion { .. } => "unit_assertion",
            StepKind::AgenticAssertion { .. } => "agentic_assertion",
        }
    }
}

/// One Selenese command: `open` a path (relative to the base URL) or a URL, `click`, `type`
/// a value, `waitForElement`, `assertText` (Selenium IDE's pattern: a glob on the whole text,
/// or `regexp:` / `exact:`), `assertVisible`; and as Playwright and Selenium IDE have them,
/// `press` (a key on the element: `Enter`, `Tab`, `Escape`, `${KEY_ENTER}` …) and `sendKeys`
/// (text and `${KEY_…}` keys typed into the element without clearing it). In `type` and
/// `sendKeys` a newline presses Enter and a tab Tab.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Command {
    pub command: SeleneseCommand,
    pub target: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum SeleneseCommand {
    Open,
    Click,
    Type,
    WaitForElement,
    AssertText,
    AssertVisible,
    Press,
    SendKeys,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Assertion {
    #[serde(rename = "type")]
    pub kind: AssertionKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
    /// A DOM property (`value`, `checked`, `href`…); none: the element's visible text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub property: Option<String>,
    /// A string, a boolean or a number.
    pub expected: Value,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AssertionKind {
    Equals,
    Contains,
    Matches,
    Exists,
    Visible,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TestRun {
    pub id: String,
    pub plan_id: String,
    pub plan_name: String,
    pub status: RunStatus,
    pub started_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<String>,
    /// Milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<u64>,
    pub base_url: String,
    pub step_results: Vec<StepResult>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The run's recording (Vaider's own field; absent from runs other tools wrote).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub video: Option<RunVideo>,
}

/// A run's recording: where its WebM is (or why there is none) and when it started, so each
/// step's `startedAt` is a moment in it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunVideo {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    pub started_at: String,
    #[serde(default)]
    pub duration_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Running,
    Passed,
    Failed,
    Error,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepResult {
    pub step_id: String,
    pub step_name: String,
    pub step_type: String,
    pub status: StepStatus,
    pub started_at: String,
    pub completed_at: String,
    /// Milliseconds.
    pub duration: u64,
    /// The page after the step: a path to a PNG.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screenshot: Option<String>,
    /// What the step did, and what the page logged to its console meanwhile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logs: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm_reasoning: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm_confidence: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actual: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    Passed,
    Failed,
    Skipped,
    Error,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_plan_in_the_contract_s_format_reads_and_writes_back_the_same() {
        let plan = json!({
            "id": "plan-1", "name": "Login", "description": "d",
            "project": {"name": "shop", "repoUrl": "https://github.com/acme/shop"},
            "prompt": "a user can log in", "baseUrl": "http://localhost:3000",
            "steps": [
                {"id": "s1", "name": "open", "type": "selenese",
                 "commands": [{"command": "open", "target": "/login"},
                              {"command": "type", "target": "#email", "value": "a@b.c"},
                              {"command": "waitForElement", "target": "text=Welcome"}]},
                {"id": "s2", "name": "check", "type": "unit_assertion",
                 "assertions": [{"type": "visible", "selector": "#greeting", "expected": true}]},
                {"id": "s3", "name": "look", "type": "agentic_assertion",
                 "instruction": "look", "criteria": "the name is shown"},
                {"id": "s4", "name": "browse", "type": "agentic_browsing",
                 "instruction": "add an item", "expectedOutcome": "one item", "timeout": 30000}
            ],
            "createdAt": "2026-11-22T10:00:00Z", "updatedAt": "2026-11-22T10:00:00Z"
        });
        let read: TestPlan = serde_json::from_value(plan.clone()).unwrap();
        assert_eq!(read.steps[0].kind.name(), "selenese");
        assert!(matches!(
            &read.steps[3].kind,
            StepKind::AgenticBrowsing { expected_outcome: Some(o), timeout: Some(30000), .. } if o == "one item"
        ));
        assert_eq!(serde_json::to_value(&read).unwrap(), plan);
    }

    #[test]
    fn an_unknown_step_type_or_command_is_refused() {
        let step = json!({"id": "s", "name": "n", "type": "teleport"});
        assert!(serde_json::from_value::<TestStep>(step).is_err());
        let step = json!({"id": "s", "name": "n", "type": "selenese",
                          "commands": [{"command": "hover", "target": "#x"}]});
        assert!(serde_json::from_value::<TestStep>(step).is_err());
    }
}
