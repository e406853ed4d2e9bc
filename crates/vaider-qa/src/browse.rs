//! An `agentic_browsing` step: a bounded loop in which the vision model uses the app as a
//! tester would. Each turn the page's screenshot (kept as evidence beside the step's shot) and
//! its numbered elements go through Vaider's one pipeline; the model names ONE action (click,
//! type, press a key, scroll, navigate, done, give up), which is performed and logged with its
//! reasoning and its shot. The loop ends when the model says done or gives up, or at its bounds
//! (a number of actions, a time); an action that cannot be done is told to the model on the
//! next turn rather than ending the step.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;
use vaider_browser::{BrowserError, ScrollDirection, StepError, Tab};
use vaider_core::analysis::{AnalysisRequest, Door};
use vaider_core::progress::NoProgress;
use vaider_core::Vaider;

use crate::steps::{join_url, Outcome, Performed};
use crate::store::write_atomic;

/// How many actions a step may take unless the run says otherwise; `done` and `give_up`
/// count, as every answer of the model does.
pub const DEFAULT_MAX_ACTIONS: usize = 10;
/// How long a step may browse when it gives no `timeout`.
pub const DEFAULT_TIME_LIMIT: Duration = Duration::from_secs(60);
/// How long a page opened by `navigate` may take to load.
const NAVIGATE_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a page changed by an action (a click that navigates) may take to load before the
/// next look at it.
const SETTLE_LIMIT: Duration = Duration::from_secs(5);
/// What an action's effects (a navigation, a re-render) get to start before the next look.
const SETTLE_START: Duration = Duration::from_millis(200);

/// What the step asks, with its bounds.
#[derive(Debug, Clone)]
pub struct Browse<'a> {
    pub instruction: &'a str,
    pub expected_outcome: Option<&'a str>,
    pub max_actions: usize,
    pub time_limit: Duration,
}

impl<'a> Browse<'a> {
    /// The step's fields: `timeout` in milliseconds, none for [`DEFAULT_TIME_LIMIT`].
    pub fn new(
        instruction: &'a str,
        expected_outcome: Option<&'a str>,
        timeout_ms: Option<u64>,
        max_actions: usize,
    ) -> Browse<'a> {
        Browse {
            instruction,
            expected_outcome: expected_outcome.filter(|o| !o.trim().is_empty()),
            max_actions,
            time_limit: timeout_ms
                .map(Duration::from_millis)
                .unwrap_or(DEFAULT_TIME_LIMIT),
        }
    }
}

/// Where a browsing step runs and what it calls.
pub struct Browsing<'a> {
    pub tab: &'a Tab,
    pub base_url: &'a str,
    pub engine: &'a Vaider,
    /// The folder relative media paths are resolved from, for the pipeline.
    pub project: &'a Path,
    pub door: Door,
    /// The history job the model calls belong to (a run's).
    pub parent_id: Option<String>,
    /// The step's screenshot; each turn's is kept beside it, `-action-K` added to its name.
    pub shot_path: &'a Path,
    /// The plan's secret values, typed in place of `{{secret:NAME}}`: the model never sees one.
    pub secrets: &'a crate::secret_values::PlanSecrets,
}

/// One action the model named. Its arguments are kept as the model gave them: one that is not
/// usable (a ref the page has not, a key that is not one) is told to the model, not fatal.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Click { reference: String },
    Type { reference: String, text: String },
    Press { key: String },
    Scroll { direction: String },
    Navigate { url: String },
    Done,
    GiveUp,
}

/// The model's answer of one turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    pub action: Action,
    pub reasoning: String,
}

/// How the loop ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Ending {
    /// The model said the instruction is carried out, with its reasoning.
    Done(String),
    /// The model said it cannot be, with its reasoning.
    GaveUp(String),
    /// The most actions were taken.
    OutOfActions(usize),
    /// The time ran out, after this many actions.
    OutOfTime(usize),
    /// The step could not go on: the model or the browser failed.
    Error(String),
}

/// What the loop did: a line per action, and how it ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Browsed {
    pub logs: Vec<String>,
    pub ending: Ending,
}

impl Browsed {
    /// The step's outcome when nothing is left to judge: `done` passes, anything else does not.
    pub fn performed(self, task: &Browse<'_>) -> Performed {
        let instruction = one_line(task.instruction);
        let (outcome, actual) = match self.ending {
            Ending::Done(why) => (Outcome::Passed, Some(why)),
            Ending::GaveUp(why) => (
                Outcome::Failed(format!("the model gave up: {why}")),
                Some(why),
            ),
            Ending::OutOfActions(n) => (
                Outcome::Failed(format!(
                    "stopped after {n} actions without finishing: {instruction}"
                )),
                None,
            ),
            Ending::OutOfTime(n) => (
                Outcome::Failed(format!(
                    "stopped at the time limit of {} s, after {n} actions, without finishing: {instruction}",
                    task.time_limit.as_secs_f32()
                )),
                None,
            ),
            Ending::Error(message) => (Outcome::Error(message), None),
        };
        Performed {
            outcome,
            logs: self.logs,
            expected: Some(
                task.expected_outcome
                    .unwrap_or(task.instruction)
                    .to_string(),
            ),
            actual,
        }
    }
}

/// Runs the loop until the model is done or gives up, or a bound is reached.
pub async fn browse(at: &Browsing<'_>, task: &Browse<'_>) -> Browsed {
    let deadline = Instant::now() + task.time_limit;
    let mut logs = Vec::new();
    // The actions so far, as the model is told them on every turn.
    let mut history: Vec<String> = Vec::new();
    for k in 1..=task.max_actions {
        let ending = match tokio::time::timeout_at(deadline, one_turn(at, task, k, &history)).await
        {
            Err(_) => Some(Ending::OutOfTime(k - 1)),
            Ok(Err(ending)) => Some(ending),
            Ok(Ok(done)) => {
                logs.push(done.log);
                history.push(done.told);
                done.ending
            }
        };
        if let Some(ending) = ending {
            return Browsed { logs, ending };
        }
    }
    Browsed {
        logs,
        ending: Ending::OutOfActions(task.max_actions),
    }
}

/// One turn's record: the log line, the line the model is told next, and the end if it is one.
struct TurnDone {
    log: String,
    told: String,
    ending: Option<Ending>,
}

/// Shows the page to the model, and performs what it names.
async fn one_turn(
    at: &Browsing<'_>,
    task: &Browse<'_>,
    k: usize,
    history: &[String],
) -> Result<TurnDone, Ending> {
    let shot = action_shot_path(at.shot_path, k);
    let png = at.tab.screenshot().await.map_err(browser_error)?;
    write_atomic(&shot, &png)
        .map_err(|e| Ending::Error(format!("STORAGE_ERROR: {}: {e}", shot.display())))?;
    let snapshot = at.tab.snapshot().await.map_err(browser_error)?;
    // A plan's secret the page shows (a field the grant names, a page that echoes it) never
    // reaches the model, the prompt the history keeps, or the logs.
    let lines: Vec<String> = snapshot
        .lines
        .iter()
        .map(|l| at.secrets.redact(l))
        .collect();
    let url = at.secrets.redact(&at.tab.url().await.unwrap_or_default());
    let prompt = prompt(task, &url, history, &at.secrets.redact(&snapshot.text()));
    let details = ask(at, &shot, prompt, &lines).await?;
    let mut turn = parse_turn(details.as_ref()).map_err(Ending::Error)?;
    // The model may repeat what it types into a password field in its reasoning.
    let mut secrets = typed_secrets(&turn.action, &lines);
    secrets.extend(at.secrets.values());
    turn.reasoning = vaider_core::redact::text(&turn.reasoning, &secrets);
    let target = describe(&turn.action, &lines);
    let mut log = format!(
        "action {k}: {target} — {} (screenshot {})",
        one_line(&turn.reasoning),
        shot.display()
    );
    let mut told = format!("Action {k}: {target}");
    let ending = match &turn.action {
        Action::Done => Some(Ending::Done(turn.reasoning.clone())),
        Action::GiveUp => Some(Ending::GaveUp(turn.reasoning.clone())),
        action => {
            match perform(at, action).await {
                Ok(()) => told.push_str(" — ok"),
                Err(Failed::Action(why)) => {
                    log.push_str(&format!("; failed: {why}"));
                    told.push_str(&format!(" — failed: {why}"));
                }
                Err(Failed::Browser(why)) => return Err(Ending::Error(why)),
            }
            None
        }
    };
    Ok(TurnDone { log, told, ending })
}

/// The model's answer of one turn, through the pipeline (history, cost); never from the cache,
/// since the same page may need another action after the last one.
async fn ask(
    at: &Browsing<'_>,
    shot: &Path,
    prompt: String,
    elements: &[String],
) -> Result<Option<Value>, Ending> {
    let mut request = AnalysisRequest::new(
        crate::tasks::BROWSE_STEP,
        at.door,
        shot.display().to_string(),
    );
    request.prompt = Some(prompt);
    // A value typed into a password field is kept nowhere: response.json and the history get
    // it redacted.
    let elements = elements.to_vec();
    let plan_values = at.secrets.values();
    request.redact = vaider_core::redact::Redactor::new(move |details| {
        let mut found = parse_turn(details)
            .map(|turn| typed_secrets(&turn.action, &elements))
            .unwrap_or_default();
        found.extend(plan_values.iter().cloned());
        found
    });
    request.parent_id = at.parent_id.clone();
    request.base_dirs = vec![at.project.to_path_buf()];
    request.no_cache = true;
    let result = at
        .engine
        .analyse(request, &NoProgress)
        .await
        .map_err(|failure| Ending::Error(format!("MODEL_ERROR: {}", failure.error)))?;
    Ok(result.details)
}

/// What the model is told each turn: the instruction, the expected outcome, where the page is,
/// the actions so far (`Action N:` lines) and the page's elements between `<<<` and `>>>`.
fn prompt(task: &Browse<'_>, url: &str, history: &[String], elements: &str) -> String {
    let mut text = format!("Instruction: {}\n", one_line(task.instruction));
    if let Some(outcome) = task.expected_outcome {
        text.push_str(&format!(
            "Expected outcome once it is done: {}\n",
            one_line(outcome)
        ));
    }
    text.push_str(&format!("The page's address: {url}\n"));
    match history.is_empty() {
        true => text.push_str("Actions so far: none\n"),
        false => text.push_str(&format!("Actions so far:\n{}\n", history.join("\n"))),
    }
    text.push_str(&format!(
        "The page's elements now, each with its ref (act on one by its ref):\n<<<\n{elements}\n>>>\n\
         Name the one next action. Say `done` once the instruction is carried out, `give_up` if it cannot be."
    ));
    text
}

/// The model's answer as a turn; an answer that names no known action is the model's error.
pub fn parse_turn(details: Option<&Value>) -> Result<Turn, String> {
    let details = details.filter(|d| d.is_object()).ok_or_else(|| {
        "MODEL_ERROR: the model's answer is not the JSON asked for: no action to take".to_string()
    })?;
    let field = |name: &str| {
        details[name]
            .as_str()
            .unwrap_or_default()
            .trim()
            .to_string()
    };
    let name = field("action");
    let (reference, text) = (field("ref"), field("text"));
    let action = match name.to_ascii_lowercase().replace([' ', '-'], "_").as_str() {
        "click" => Action::Click { reference },
        "type" => Action::Type {
            reference,
            // What is typed is kept as given: spaces may be part of it.
            text: details["text"].as_str().unwrap_or_default().to_string(),
        },
        "press" => Action::Press { key: text },
        "scroll" => Action::Scroll { direction: text },
        "navigate" => Action::Navigate { url: text },
        "done" => Action::Done,
        "give_up" => Action::GiveUp,
        "" => return Err("MODEL_ERROR: the model's answer names no action".to_string()),
        _ => {
            return Err(format!(
                "MODEL_ERROR: the model named the action {name:?}, which is not one of click, type, press, scroll, navigate, done, give_up"
            ))
        }
    };
    Ok(Turn {
        action,
        reasoning: field("reasoning"),
    })
}

/// Why an action was not done: the model's to correct, or the browser's end.
enum Failed {
    Action(String),
    Browser(String),
}

impl From<StepError> for Failed {
    fn from(error: StepError) -> Failed {
        match error {
            StepError::Browser(BrowserError::Cdp { .. }) => {
                Failed::Browser(format!("BROWSER_ERROR: {error}"))
            }
            other => Failed::Action(other.to_string()),
        }
    }
}

/// Performs the action, then gives the page the time to show its effect.
async fn perform(at: &Browsing<'_>, action: &Action) -> Result<(), Failed> {
    let tab = at.tab;
    match action {
        Action::Click { reference } => tab.click_ref(parse_ref(reference)?).await?,
        Action::Type { reference, text } => {
            let reference = parse_ref(reference)?;
            let text = with_secrets(at, reference, text).await?;
            tab.type_ref(reference, &text).await?
        }
        Action::Press { key } => tab.press(key).await?,
        Action::Scroll { direction } => tab
            .scroll(parse_direction(direction)?)
            .await
            .map_err(StepError::from)?,
        Action::Navigate { url } if url.is_empty() => {
            return Err(Failed::Action("navigate needs a URL or a path".into()))
        }
        Action::Navigate { url } => {
            // The tab's URL policy decides (web pages of the allowed hosts only); a refusal
            // ends the step.
            let url = join_url(at.base_url, url);
            match tab.open(&url, NAVIGATE_TIMEOUT).await {
                Ok(()) => {}
                Err(e @ BrowserError::Refused(_)) => return Err(Failed::Browser(e.to_string())),
                Err(e) => return Err(Failed::Action(e.to_string())),
            }
        }
        Action::Done | Action::GiveUp => {}
    }
    tokio::time::sleep(SETTLE_START).await;
    tab.wait_until_loaded(SETTLE_LIMIT)
        .await
        .map_err(|e| Failed::from(StepError::from(e)))?;
    // A click or a key that led to a refused address ends the step here.
    match tab.refused_navigation() {
        Some(refusal) => Err(Failed::Browser(format!("NAVIGATION_REFUSED: {refusal}"))),
        None => Ok(()),
    }
}

/// `text` with the plan's secrets filled in, once the page is on their origin and the field
/// may receive them: the model cannot have a secret typed into a box that shows it.
async fn with_secrets(at: &Browsing<'_>, reference: u32, text: &str) -> Result<String, Failed> {
    let Some(granted) = at.secrets.granted_fields(text) else {
        return Ok(text.to_string());
    };
    let url = at.tab.url().await.unwrap_or_default();
    at.secrets
        .check_origin(text, &url)
        .map_err(Failed::Action)?;
    if !at.tab.ref_accepts_secret(reference, &granted).await? {
        let field = format!("the element [{reference}]");
        return Err(Failed::Action(crate::secret_values::field_refusal(
            text, at.secrets, &field,
        )));
    }
    Ok(at.secrets.fill(text))
}

fn parse_ref(reference: &str) -> Result<u32, Failed> {
    let digits = reference
        .trim()
        .trim_start_matches('[')
        .trim_end_matches(']');
    digits.parse().map_err(|_| {
        Failed::Action(format!(
            "{reference:?} is not a ref: give the number of an element in the list"
        ))
    })
}

fn parse_direction(direction: &str) -> Result<ScrollDirection, Failed> {
    match direction.trim().to_ascii_lowercase().as_str() {
        "up" => Ok(ScrollDirection::Up),
        "down" | "" => Ok(ScrollDirection::Down),
        other => Err(Failed::Action(format!(
            "{other:?} is not a direction: scroll up or down"
        ))),
    }
}

/// The action and what it acts on, as the log and the model read it: the element's line from
/// the snapshot, and what is typed unless the field is a secret one.
fn describe(action: &Action, elements: &[String]) -> String {
    let element = |reference: &str| {
        let prefix = format!("[{}] ", reference.trim());
        elements
            .iter()
            .find(|line| line.starts_with(&prefix))
            .map(|line| line.split(" value=").next().unwrap_or(line).to_string())
            .unwrap_or_else(|| format!("[{}] (not in the list)", reference.trim()))
    };
    match action {
        Action::Click { reference } => format!("click {}", element(reference)),
        Action::Type { reference, text } => {
            let target = element(reference);
            let typed = match target.contains(" secret") {
                true => format!("({} characters, hidden)", text.chars().count()),
                false => format!("{text:?}"),
            };
            format!("type {typed} into {target}")
        }
        Action::Press { key } => format!("press {key:?}"),
        Action::Scroll { direction } => format!("scroll {direction}"),
        Action::Navigate { url } => format!("navigate to {url}"),
        Action::Done => "done".into(),
        Action::GiveUp => "give up".into(),
    }
}

/// What the action types into a secret (password) field, if it does.
fn typed_secrets(action: &Action, elements: &[String]) -> Vec<String> {
    match action {
        Action::Type { reference, text } => {
            let prefix = format!("[{}] ", reference.trim());
            let line = elements.iter().find(|line| line.starts_with(&prefix));
            let field = line.map(|l| l.split(" value=").next().unwrap_or(l));
            match field.is_some_and(|f| f.ends_with(" secret")) {
                true => vec![text.clone()],
                false => Vec::new(),
            }
        }
        _ => Vec::new(),
    }
}

/// `runs/<runId>/NN-<stepId>.png` → `runs/<runId>/NN-<stepId>-action-K.png`.
fn action_shot_path(shot_path: &Path, k: usize) -> PathBuf {
    let stem = shot_path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    shot_path.with_file_name(format!("{stem}-action-{k}.png"))
}

fn browser_error(error: BrowserError) -> Ending {
    Ending::Error(format!("BROWSER_ERROR: {error}"))
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn turn(answer: Value) -> Result<Turn, String> {
        parse_turn(Some(&answer))
    }

    #[test]
    fn each_action_is_read_with_its_arguments() {
        let click =
            turn(json!({"action": "click", "ref": "3", "text": "", "reasoning": "the button"}));
        assert_eq!(
            click.unwrap(),
            Turn {
                action: Action::Click {
                    reference: "3".into()
                },
                reasoning: "the button".into()
            }
        );
        let typed =
            turn(json!({"action": "type", "ref": "2", "text": " two words ", "reasoning": ""}));
        assert_eq!(
            typed.unwrap().action,
            Action::Type {
                reference: "2".into(),
                text: " two words ".into()
            }
        );
        for (name, action) in [
            (
                "press",
                Action::Press {
                    key: "Enter".into(),
                },
            ),
            (
                "scroll",
                Action::Scroll {
                    direction: "Enter".into(),
                },
            ),
            (
                "navigate",
                Action::Navigate {
                    url: "Enter".into(),
                },
            ),
            ("done", Action::Done),
            ("give_up", Action::GiveUp),
            ("Give up", Action::GiveUp),
        ] {
            let read = turn(json!({"action": name, "ref": "", "text": "Enter"})).unwrap();
            assert_eq!(read.action, action, "{name}");
        }
    }

    #[test]
    fn an_answer_that_names_no_known_action_is_a_model_error() {
        let unknown = turn(json!({"action": "hover", "ref": "1"})).unwrap_err();
        assert!(
            unknown.starts_with("MODEL_ERROR:") && unknown.contains("\"hover\""),
            "{unknown}"
        );
        let none = turn(json!({"ref": "1"})).unwrap_err();
        assert!(none.contains("names no action"), "{none}");
        let wrong_type = turn(json!({"action": 3})).unwrap_err();
        assert!(wrong_type.contains("names no action"), "{wrong_type}");
        for not_json in [None, Some(json!("click 3")), Some(json!([1]))] {
            let error = parse_turn(not_json.as_ref()).unwrap_err();
            assert!(error.contains("not the JSON asked for"), "{error}");
        }
    }

    #[test]
    fn arguments_the_page_cannot_take_are_told_not_fatal() {
        assert_eq!(parse_ref(" 12 ").ok(), Some(12));
        assert_eq!(parse_ref("[4]").ok(), Some(4));
        for bad in ["", "abc", "-1"] {
            match parse_ref(bad) {
                Err(Failed::Action(why)) => assert!(why.contains("not a ref"), "{why}"),
                _ => panic!("{bad:?} is not a ref"),
            }
        }
        assert_eq!(parse_direction("UP").ok(), Some(ScrollDirection::Up));
        assert!(matches!(
            parse_direction("sideways"),
            Err(Failed::Action(_))
        ));
    }

    #[test]
    fn the_log_names_the_element_and_hides_what_goes_into_a_secret_field() {
        let lines = vec![
            "[2] textbox \"Email\" value=\"\"".to_string(),
            "[3] textbox \"Password\" secret value=\"\"".to_string(),
        ];
        let email = Action::Type {
            reference: "2".into(),
            text: "ada@example.com".into(),
        };
        assert_eq!(
            describe(&email, &lines),
            "type \"ada@example.com\" into [2] textbox \"Email\""
        );
        let password = Action::Type {
            reference: "3".into(),
            text: "hunter2".into(),
        };
        let said = describe(&password, &lines);
        assert_eq!(
            said,
            "type (7 characters, hidden) into [3] textbox \"Password\" secret"
        );
        let missing = Action::Click {
            reference: "9".into(),
        };
        assert_eq!(describe(&missing, &lines), "click [9] (not in the list)");
    }

    #[test]
    fn the_prompt_lists_the_actions_so_far_and_fences_the_elements() {
        let task = Browse::new("Log in\nas Ada", Some("the greeting"), Some(1500), 3);
        assert_eq!(task.time_limit, Duration::from_millis(1500));
        let first = prompt(&task, "http://app/", &[], "[1] button \"Go\"");
        assert!(first.starts_with(
            "Instruction: Log in as Ada\nExpected outcome once it is done: the greeting\n"
        ));
        assert!(first.contains("Actions so far: none\n"));
        assert!(first.contains("<<<\n[1] button \"Go\"\n>>>"));
        let later = prompt(
            &task,
            "http://app/",
            &["Action 1: click [1] — ok".into()],
            "",
        );
        assert!(later.contains("Actions so far:\nAction 1: click [1] — ok\n"));
        let shot = action_shot_path(Path::new("/runs/r/02-log-in.png"), 3);
        assert_eq!(shot, Path::new("/runs/r/02-log-in-action-3.png"));
    }

    #[test]
    fn each_ending_is_a_step_outcome() {
        let task = Browse::new("Add an item", None, None, 3);
        assert_eq!(task.time_limit, DEFAULT_TIME_LIMIT);
        let ended = |ending| {
            Browsed {
                logs: vec![],
                ending,
            }
            .performed(&task)
        };
        assert_eq!(ended(Ending::Done("added".into())).outcome, Outcome::Passed);
        assert_eq!(
            ended(Ending::OutOfActions(3)).outcome,
            Outcome::Failed("stopped after 3 actions without finishing: Add an item".into())
        );
        let gave_up = ended(Ending::GaveUp("no button".into()));
        assert_eq!(
            gave_up.outcome,
            Outcome::Failed("the model gave up: no button".into())
        );
        assert_eq!(gave_up.actual.as_deref(), Some("no button"));
        match ended(Ending::OutOfTime(2)).outcome {
            Outcome::Failed(why) => {
                assert!(why.contains("time limit of 60 s, after 2 actions"), "{why}")
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            ended(Ending::Error("MODEL_ERROR: x".into())).outcome,
            Outcome::Error("MODEL_ERROR: x".into())
        );
    }
}
