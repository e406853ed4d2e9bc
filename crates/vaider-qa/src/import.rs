//! A Playwright Test Agents planner's test plan (`specs/*.md`) as a Vaider plan
//! (`vaider plan import`). The planner writes Markdown: `# Plan name`, an overview
//! (`## Application Overview` or `## Purpose`), then scenarios under headings, each with a
//! `**Steps:**` list of numbered actions (each optionally followed by an indented
//! `Expect: …` line) and optionally `**Expected**` / `**Expected Results:**` /
//! `**Post Conditions:**` bullets. Each numbered action becomes an `agentic_browsing` step
//! (its `Expect:` its expectedOutcome); a scenario's expected results and post conditions
//! become one `agentic_assertion` step, judged by the model like any other.

use crate::plan::{Project, StepKind, TestPlan, TestStep};

/// One scenario as the planner wrote it.
#[derive(Debug, Default, PartialEq)]
pub struct Scenario {
    pub name: String,
    /// Each action with its expected result, if the planner gave one.
    pub steps: Vec<(String, Option<String>)>,
    /// The scenario's expected results and post conditions.
    pub expected: Vec<String>,
}

/// The plan's name, overview and scenarios.
#[derive(Debug, Default, PartialEq)]
pub struct PlannerSpec {
    pub name: String,
    pub overview: String,
    pub scenarios: Vec<Scenario>,
}

#[derive(Clone, Copy, PartialEq)]
enum Section {
    Other,
    Overview,
    Steps,
    Expected,
}

/// Reads the planner's Markdown.
pub fn parse(markdown: &str) -> PlannerSpec {
    let mut spec = PlannerSpec::default();
    let mut section = Section::Other;
    let mut heading = String::new();
    for line in markdown.lines() {
        let trimmed = line.trim();
        if let Some(title) = trimmed.strip_prefix("# ") {
            spec.name = title.trim().to_string();
            section = Section::Other;
        } else if trimmed.starts_with('#') {
            let title = trimmed.trim_start_matches('#').trim();
            heading = scenario_title(title);
            section = match title.to_ascii_lowercase().as_str() {
                "application overview" | "overview" | "purpose" => Section::Overview,
                _ => Section::Other,
            };
        } else if let Some(label) = bold_label(trimmed) {
            section = match label.as_str() {
                "steps" => {
                    spec.scenarios.push(Scenario {
                        name: heading.clone(),
                        ..Scenario::default()
                    });
                    Section::Steps
                }
                l if l.starts_with("expect") || l.starts_with("post condition") => {
                    match spec.scenarios.is_empty() {
                        true => Section::Other,
                        false => Section::Expected,
                    }
                }
                _ => Section::Other,
            };
        } else if !trimmed.is_empty() {
            read_line(&mut spec, section, trimmed);
        }
    }
    spec.scenarios.retain(|s| !s.steps.is_empty());
    spec
}

/// One non-empty line inside a section.
fn read_line(spec: &mut PlannerSpec, section: Section, line: &str) {
    match section {
        Section::Overview => {
            if !spec.overview.is_empty() {
                spec.overview.push(' ');
            }
            spec.overview.push_str(line);
        }
        Section::Steps => {
            let Some(scenario) = spec.scenarios.last_mut() else {
                return;
            };
            if let Some(action) = numbered(line) {
                scenario.steps.push((action.to_string(), None));
            } else if let Some((action, expect)) = scenario.steps.last_mut() {
                // A wrapped line continues the expectation, or the action before one.
                match (strip_expect(line), expect) {
                    (Some(e), expect) => *expect = Some(e.to_string()),
                    (None, Some(expect)) => continue_text(expect, line),
                    (None, None) => continue_text(action, line),
                }
            }
        }
        Section::Expected => {
            if let Some(scenario) = spec.scenarios.last_mut() {
                match bullet(line).or_else(|| numbered(line)) {
                    Some(item) => scenario.expected.push(item.to_string()),
                    None => match scenario.expected.last_mut() {
                        Some(last) => continue_text(last, line),
                        None => scenario.expected.push(line.to_string()),
                    },
                }
            }
        }
        Section::Other => {}
    }
}

fn continue_text(text: &mut String, line: &str) {
    if !text.is_empty() {
        text.push(' ');
    }
    text.push_str(line);
}

/// `**Steps:**`, `**Expected**`, `**Post Conditions:**` → their lower-case label; a bold line
/// with more after it (`**Seed:** \`tests/seed.spec.ts\``) is a label too.
fn bold_label(line: &str) -> Option<String> {
    let inner = line.strip_prefix("**")?;
    let end = inner.find("**")?;
    Some(
        inner[..end]
            .trim()
            .trim_end_matches(':')
            .trim()
            .to_ascii_lowercase(),
    )
}

/// `1. Click …` → `Click …`.
fn numbered(line: &str) -> Option<&str> {
    let digits = line.len() - line.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 {
        return None;
    }
    let rest = line[digits..].strip_prefix(['.', ')'])?;
    rest.starts_with(' ').then(|| rest.trim())
}

fn bullet(line: &str) -> Option<&str> {
    line.strip_prefix("- ")
        .or_else(|| line.strip_prefix("* "))
        .map(str::trim)
}

/// `Expect: …` (the planner's line under an action) → what follows.
fn strip_expect(line: &str) -> Option<&str> {
    let line = bullet(line).unwrap_or(line);
    [
        "Expect:",
        "Expected:",
        "Expected result:",
        "Expected Result:",
    ]
    .iter()
    .find_map(|p| line.strip_prefix(p))
    .map(str::trim)
}

/// `1.2. Adds a todo` → `Adds a todo` (the planner numbers its headings); `SC-1: …` stays.
fn scenario_title(title: &str) -> String {
    let rest = title.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
    match rest.len() < title.len() && rest.starts_with(' ') {
        true => rest.trim().to_string(),
        false => title.to_string(),
    }
}

/// The Vaider plan: `id` and the app's `base_url` are the caller's; `now` stamps it.
pub fn to_plan(spec: &PlannerSpec, id: &str, base_url: &str, project: &str, now: &str) -> TestPlan {
    let mut steps = Vec::new();
    for (s, scenario) in spec.scenarios.iter().enumerate() {
        for (k, (action, expect)) in scenario.steps.iter().enumerate() {
            steps.push(TestStep {
                id: format!("s{}-{}", s + 1, k + 1),
                name: format!("{} — {}. {}", scenario.name, k + 1, short(action)),
                kind: StepKind::AgenticBrowsing {
                    instruction: action.clone(),
                    expected_outcome: expect.clone(),
                    timeout: None,
                },
            });
        }
        if !scenario.expected.is_empty() {
            steps.push(TestStep {
                id: format!("s{}-expected", s + 1),
                name: format!("{} — expected results", scenario.name),
                kind: StepKind::AgenticAssertion {
                    instruction: format!(
                        "After the scenario \"{}\", check the page.",
                        scenario.name
                    ),
                    criteria: scenario
                        .expected
                        .iter()
                        .map(|e| format!("- {e}"))
                        .collect::<Vec<_>>()
                        .join("\n"),
                    context: None,
                },
            });
        }
    }
    TestPlan {
        id: id.to_string(),
        name: spec.name.clone(),
        description: spec.overview.clone(),
        project: Project {
            name: project.to_string(),
            repo_url: None,
            description: None,
        },
        prompt: String::new(),
        base_url: base_url.to_string(),
        allowed_hosts: Vec::new(),
        steps,
        created_at: now.to_string(),
        updated_at: now.to_string(),
        context: None,
        secrets: Default::default(),
    }
}

/// Reads the planner's `file` and saves it as a plan in `store` (its id from the file's name;
/// `project` names the project, `base_url` the app). Returns the plan and its file.
pub fn import_file(
    store: &crate::QaStore,
    file: &std::path::Path,
    base_url: &str,
    project: &str,
) -> Result<(TestPlan, std::path::PathBuf), String> {
    let markdown = std::fs::read_to_string(file)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let spec = parse(&markdown);
    if spec.scenarios.is_empty() {
        return Err(format!(
            "{} has no scenario with a numbered **Steps:** list: is it a Playwright planner's specs/*.md?",
            file.display()
        ));
    }
    let stem = file.file_stem().unwrap_or_default().to_string_lossy();
    let plan = to_plan(
        &spec,
        &plan_id(&stem),
        base_url,
        project,
        &vaider_core::pipeline::now_rfc3339(),
    );
    let path = store.save_plan(&plan).map_err(|e| e.to_string())?;
    Ok((plan, path))
}

/// A plan id from a file name: letters, digits, '-' and '_' (the store's ids).
fn plan_id(stem: &str) -> String {
    let id: String = stem
        .chars()
        .map(
            |c| match c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                true => c,
                false => '-',
            },
        )
        .collect();
    match id.trim_matches('-').is_empty() {
        true => "imported-plan".into(),
        false => id.trim_matches('-').to_string(),
    }
}

/// A step's name: the action's first 60 characters.
fn short(action: &str) -> String {
    match action.char_indices().nth(60) {
        Some((at, _)) => format!("{}…", &action[..at]),
        None => action.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Written for this test in the planner's format (`planner_save_plan`'s layout).
    const SAVED: &str = "# TodoMVC Test Plan

## Application Overview

A todo list: add, complete and remove todos.

## Test Scenarios

### 1. Adding Todos

**Seed:** `tests/seed.spec.ts`

#### 1.1. Add a single todo

**File:** `tests/adding-todos/add-single.spec.ts`

**Steps:**
  1. Type \"Buy milk\" into the \"What needs to be done?\" field
     Expect: The field shows \"Buy milk\"
  2. Press Enter
     Expect: \"Buy milk\" appears in the list
     and the field is empty

**Post Conditions:**
  - The counter reads \"1 item left\"

#### 1.2. Add nothing

**File:** `tests/adding-todos/add-nothing.spec.ts`

**Steps:**
  1. Press Enter in the empty field
";

    /// The layout of the docs' example (`### SC-1:`, `**Steps**`, `**Expected**`).
    const DOCS: &str = "# Feature: Todos

## Purpose
Keep a list.

## Scenarios

### SC-1: Complete a todo
**Steps**
1. Add \"Walk the dog\".
2. Tick its checkbox.

**Expected**
- The todo is struck through.
- The counter reads \"0 items left\".

## Data
- none
";

    #[test]
    fn the_planner_s_saved_plan_reads_as_scenarios_steps_and_expectations() {
        let spec = parse(SAVED);
        assert_eq!(spec.name, "TodoMVC Test Plan");
        assert_eq!(
            spec.overview,
            "A todo list: add, complete and remove todos."
        );
        assert_eq!(spec.scenarios.len(), 2);
        let first = &spec.scenarios[0];
        assert_eq!(first.name, "Add a single todo");
        assert_eq!(
            first.steps[1],
            (
                "Press Enter".to_string(),
                Some("\"Buy milk\" appears in the list and the field is empty".to_string())
            )
        );
        assert_eq!(first.expected, ["The counter reads \"1 item left\""]);
        assert_eq!(spec.scenarios[1].steps[0].1, None);
    }

    #[test]
    fn a_spec_file_is_saved_as_a_plan_named_after_it() {
        let project = tempfile::tempdir().unwrap();
        let store = crate::QaStore::in_project(project.path());
        let file = project.path().join("todo.plan.md");
        std::fs::write(&file, SAVED).unwrap();
        let (plan, path) = import_file(&store, &file, "http://127.0.0.1:4200", "todomvc").unwrap();
        assert_eq!(plan.id, "todo-plan");
        assert_eq!(store.plan("todo-plan").unwrap(), (plan, path));
        std::fs::write(&file, "# Notes\n\nnothing to do\n").unwrap();
        let err = import_file(&store, &file, "http://127.0.0.1:4200", "todomvc").unwrap_err();
        assert!(err.contains("no scenario"), "{err}");
    }

    #[test]
    fn the_docs_layout_reads_too() {
        let spec = parse(DOCS);
        assert_eq!(spec.name, "Feature: Todos");
        assert_eq!(spec.overview, "Keep a list.");
        assert_eq!(spec.scenarios.len(), 1);
        assert_eq!(spec.scenarios[0].name, "SC-1: Complete a todo");
        assert_eq!(spec.scenarios[0].steps.len(), 2);
        assert_eq!(
            spec.scenarios[0].expected.len(),
            2,
            "the Data list is not expected"
        );
    }

    #[test]
    fn actions_become_agentic_browsing_and_expected_results_an_agentic_assertion() {
        let plan = to_plan(
            &parse(SAVED),
            "todos",
            "http://127.0.0.1:4200",
            "todomvc",
            "t",
        );
        let kinds: Vec<_> = plan.steps.iter().map(|s| s.kind.name()).collect();
        assert_eq!(
            kinds,
            [
                "agentic_browsing",
                "agentic_browsing",
                "agentic_assertion",
                "agentic_browsing"
            ]
        );
        assert!(matches!(
            &plan.steps[0].kind,
            StepKind::AgenticBrowsing { instruction, expected_outcome: Some(e), .. }
                if instruction.starts_with("Type \"Buy milk\"") && e == "The field shows \"Buy milk\""
        ));
        assert!(matches!(
            &plan.steps[2].kind,
            StepKind::AgenticAssertion { criteria, .. } if criteria == "- The counter reads \"1 item left\""
        ));
        // The contract's shape: it reads back as a plan.
        let json = serde_json::to_value(&plan).unwrap();
        assert_eq!(serde_json::from_value::<TestPlan>(json).unwrap(), plan);
    }
}
