//! The scripted steps of a plan, performed on a browser tab: Selenese commands (`open`,
//! `click`, `type`, `sendKeys`, `press`, `waitForElement`, `assertText`, `assertVisible`) and DOM assertions
//! (`equals`, `contains`, `matches`, `exists`, `visible` on an element's text or a property).
//! Each waits for its element (up to the step's timeout) and says, when it does not hold, what
//! was expected and what the page had. A check that does not hold, or an element the page
//! never shows, fails the step (the app's fault); a selector that is not one, or a browser that
//! broke, is an error (the plan's or the machine's).

use std::time::Duration;

use serde_json::Value;
use vaider_browser::{StepError, Tab};

use crate::plan::{Assertion, AssertionKind, Command, SeleneseCommand};

/// Where a step runs.
pub struct StepContext<'a> {
    pub tab: &'a Tab,
    pub base_url: &'a str,
    /// How long each command waits for its element.
    pub timeout: Duration,
    /// The plan's secret values, typed in place of `{{secret:NAME}}`.
    pub secrets: &'a crate::secret_values::PlanSecrets,
}

/// How a scripted step ended, with what it did.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Performed {
    pub outcome: Outcome,
    /// One line per command or assertion done.
    pub logs: Vec<String>,
    pub expected: Option<String>,
    pub actual: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub enum Outcome {
    #[default]
    Passed,
    /// A check did not hold; the message says which.
    Failed(String),
    /// The step could not be performed.
    Error(String),
}

/// Performs the commands in order, stopping at the first that fails.
pub async fn selenese(ctx: &StepContext<'_>, commands: &[Command]) -> Performed {
    let mut done = Performed::default();
    for (index, command) in commands.iter().enumerate() {
        let label = match is_secret_field(ctx, command).await {
            true => describe_secret(command),
            false => describe_command(command),
        };
        match perform(ctx, command).await {
            Ok(()) => done.logs.push(format!("{}. {label}: ok", index + 1)),
            Err(failure) => {
                done.logs
                    .push(format!("{}. {label}: {}", index + 1, failure.message()));
                done.expected = failure.expected.clone();
                done.actual = failure.actual.clone();
                done.outcome = failure.into_outcome();
                return done;
            }
        }
    }
    done
}

/// Checks the assertions in order, stopping at the first that does not hold.
pub async fn unit_assertions(ctx: &StepContext<'_>, assertions: &[Assertion]) -> Performed {
    let mut done = Performed::default();
    for (index, assertion) in assertions.iter().enumerate() {
        let label = describe_assertion(assertion);
        match check(ctx, assertion).await {
            Ok(actual) => done
                .logs
                .push(format!("{}. {label}: ok ({actual})", index + 1)),
            Err(failure) => {
                done.logs
                    .push(format!("{}. {label}: {}", index + 1, failure.message()));
                done.expected = failure.expected.clone();
                done.actual = failure.actual.clone();
                done.outcome = failure.into_outcome();
                return done;
            }
        }
    }
    done
}

/// Why one command or assertion did not pass.
struct Failure {
    kind: FailureKind,
    message: String,
    expected: Option<String>,
    actual: Option<String>,
}

enum FailureKind {
    Failed,
    Error,
}

impl Failure {
    fn failed(message: impl Into<String>, expected: String, actual: String) -> Failure {
        Failure {
            kind: FailureKind::Failed,
            message: message.into(),
            expected: Some(expected),
            actual: Some(actual),
        }
    }

    fn error(message: impl Into<String>) -> Failure {
        Failure {
            kind: FailureKind::Error,
            message: message.into(),
            expected: None,
            actual: None,
        }
    }

    fn message(&self) -> &str {
        &self.message
    }

    fn into_outcome(self) -> Outcome {
        match self.kind {
            FailureKind::Failed => Outcome::Failed(self.message),
            FailureKind::Error => Outcome::Error(self.message),
        }
    }
}

/// An element that never came is the app's failure; a bad selector or a broken browser is not.
impl From<StepError> for Failure {
    fn from(error: StepError) -> Failure {
        match &error {
            StepError::NotFound { selector, .. } => Failure::failed(
                error.to_string(),
                format!("an element matching `{selector}`"),
                "none on the page".into(),
            ),
            StepError::NotVisible { selector, .. } => Failure::failed(
                error.to_string(),
                format!("`{selector}` visible"),
                "on the page but hidden".into(),
            ),
            _ => Failure::error(error.to_string()),
        }
    }
}

async fn perform(ctx: &StepContext<'_>, command: &Command) -> Result<(), Failure> {
    let (tab, wait, target) = (ctx.tab, ctx.timeout, command.target.as_str());
    let value = command.value.as_deref().unwrap_or_default();
    match command.command {
        SeleneseCommand::Open => {
            let url = join_url(ctx.base_url, target);
            tab.open(&url, wait.max(Duration::from_secs(30)))
                .await
                .map_err(|e| Failure::error(e.to_string()))
        }
        SeleneseCommand::Click => Ok(tab.click(target, wait).await?),
        SeleneseCommand::Type => {
            let text = with_secrets(ctx, target, value).await?;
            Ok(tab.type_into(target, &text, wait).await?)
        }
        SeleneseCommand::SendKeys => {
            let text = with_secrets(ctx, target, value).await?;
            Ok(tab.send_keys(target, &text, wait).await?)
        }
        SeleneseCommand::Press => Ok(tab.press_on(target, value, wait).await?),
        SeleneseCommand::WaitForElement => {
            tab.wait_for(target, true, wait).await?;
            Ok(())
        }
        SeleneseCommand::AssertVisible => {
            tab.wait_for(target, true, wait).await?;
            Ok(())
        }
        SeleneseCommand::AssertText => {
            let text = text_when(tab, target, wait, |t| text_matches(value, t)).await?;
            match text_matches(value, &text) {
                true => Ok(()),
                false => Err(Failure::failed(
                    format!("the text of `{target}` is {text:?}, not {value:?}"),
                    // What a person expects to read: `exact:` is the pattern's syntax.
                    value.strip_prefix("exact:").unwrap_or(value).to_string(),
                    text,
                )),
            }
        }
    }
}

/// `value` with its secrets filled in, once the page is on their origin and the field may
/// receive them (a password field, or one the grant names); a refusal is the plan's error.
async fn with_secrets(ctx: &StepContext<'_>, target: &str, value: &str) -> Result<String, Failure> {
    let Some(granted) = ctx.secrets.granted_fields(value) else {
        return Ok(value.to_string());
    };
    let url = ctx.tab.url().await.unwrap_or_default();
    ctx.secrets
        .check_origin(value, &url)
        .map_err(Failure::error)?;
    if !ctx
        .tab
        .accepts_secret(target, &granted, ctx.timeout)
        .await?
    {
        let why = crate::secret_values::field_refusal(value, ctx.secrets, &format!("`{target}`"));
        return Err(Failure::error(why));
    }
    Ok(ctx.secrets.fill(value))
}

/// The element's text once `good` holds for it, or as it is when the wait is over: an
/// assertion on a page that is still updating gives it the same time a user would.
async fn text_when(
    tab: &Tab,
    selector: &str,
    wait: Duration,
    good: impl Fn(&str) -> bool,
) -> Result<String, Failure> {
    let start = tokio::time::Instant::now();
    loop {
        let text = normalise(&tab.text(selector, wait).await?);
        if good(&text) || start.elapsed() >= wait {
            return Ok(text);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn check(ctx: &StepContext<'_>, assertion: &Assertion) -> Result<String, Failure> {
    let (tab, wait) = (ctx.tab, ctx.timeout);
    let selector = assertion.selector.as_deref().unwrap_or("body");
    let expected = &assertion.expected;
    match assertion.kind {
        AssertionKind::Exists | AssertionKind::Visible => {
            let want = truthy(expected);
            let visible_wanted = assertion.kind == AssertionKind::Visible;
            let state = settle_presence(tab, selector, wait, visible_wanted, want).await?;
            let word = if visible_wanted { "visible" } else { "present" };
            let describe = |yes: bool| format!("{word}: {yes}");
            match state == want {
                true => Ok(describe(state)),
                false => Err(Failure::failed(
                    format!("`{selector}` is {}{word}", if state { "" } else { "not " }),
                    describe(want),
                    describe(state),
                )),
            }
        }
        AssertionKind::Equals | AssertionKind::Contains | AssertionKind::Matches => {
            let compare = Comparison::new(assertion.kind, expected)?;
            let actual = actual_when(ctx, selector, assertion.property.as_deref(), |a| {
                compare.holds(a)
            })
            .await?;
            match compare.holds(&actual) {
                true => Ok(shown(&actual)),
                false => Err(Failure::failed(
                    format!(
                        "`{selector}`{} is {}, which {}",
                        assertion
                            .property
                            .as_deref()
                            .map(|p| format!(".{p}"))
                            .unwrap_or_default(),
                        shown(&actual),
                        compare.describe()
                    ),
                    compare.describe(),
                    shown(&actual),
                )),
            }
        }
    }
}

/// The element's text or property once the comparison holds, or as it is when the wait ends.
async fn actual_when(
    ctx: &StepContext<'_>,
    selector: &str,
    property: Option<&str>,
    good: impl Fn(&Value) -> bool,
) -> Result<Value, Failure> {
    let start = tokio::time::Instant::now();
    loop {
        let actual = match property {
            Some(p) => ctx.tab.property(selector, p, ctx.timeout).await?,
            None => Value::String(normalise(&ctx.tab.text(selector, ctx.timeout).await?)),
        };
        if good(&actual) || start.elapsed() >= ctx.timeout {
            return Ok(actual);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Whether the element is there (or visible), waiting up to `wait` for it to become what is
/// wanted.
async fn settle_presence(
    tab: &Tab,
    selector: &str,
    wait: Duration,
    visible: bool,
    want: bool,
) -> Result<bool, Failure> {
    let start = tokio::time::Instant::now();
    loop {
        let (found, shown) = tab
            .probe(selector)
            .await
            .map_err(|e| Failure::error(e.to_string()))?;
        let state = if visible { found && shown } else { found };
        if state == want || start.elapsed() >= wait {
            return Ok(state);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// `equals`, `contains` or `matches`, with what is expected.
enum Comparison {
    Equals(Value),
    Contains(String),
    Matches(regex::Regex, String),
}

impl Comparison {
    fn new(kind: AssertionKind, expected: &Value) -> Result<Comparison, Failure> {
        Ok(match kind {
            AssertionKind::Contains => Comparison::Contains(plain(expected)),
            AssertionKind::Matches => {
                let pattern = plain(expected);
                let regex = regex::Regex::new(&pattern).map_err(|e| {
                    Failure::error(format!("{pattern:?} is not a regular expression: {e}"))
                })?;
                Comparison::Matches(regex, pattern)
            }
            _ => Comparison::Equals(expected.clone()),
        })
    }

    fn holds(&self, actual: &Value) -> bool {
        match self {
            Comparison::Equals(expected) => equal(expected, actual),
            Comparison::Contains(part) => plain(actual).contains(part.as_str()),
            Comparison::Matches(regex, _) => regex.is_match(&plain(actual)),
        }
    }

    fn describe(&self) -> String {
        match self {
            Comparison::Equals(expected) => format!("should equal {}", shown(expected)),
            Comparison::Contains(part) => format!("should contain {part:?}"),
            Comparison::Matches(_, pattern) => format!("should match /{pattern}/"),
        }
    }
}

/// Equal as a user means it: the same text (spaces normalised), the same number, the same
/// truth, whether the page gave a string or a number.
fn equal(expected: &Value, actual: &Value) -> bool {
    match (expected, actual) {
        (Value::Number(e), _) => plain(actual)
            .parse::<f64>()
            .is_ok_and(|a| e.as_f64().is_some_and(|e| (e - a).abs() < 1e-9)),
        (Value::Bool(e), Value::Bool(a)) => e == a,
        (Value::Bool(e), _) => plain(actual) == e.to_string(),
        _ => normalise(&plain(expected)) == normalise(&plain(actual)),
    }
}

fn truthy(value: &Value) -> bool {
    match value {
        Value::Bool(b) => *b,
        Value::String(s) => !matches!(s.trim(), "false" | "0" | "no" | ""),
        Value::Number(n) => n.as_f64().is_some_and(|n| n != 0.0),
        _ => false,
    }
}

/// A value as the text a plan compares: a string as it is, null as nothing, others as JSON.
pub(crate) fn plain(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn shown(value: &Value) -> String {
    match value {
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

fn normalise(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Selenium IDE's text patterns: `exact:…`, `regexp:…`, or a glob (`*`, `?`) on the whole text,
/// which is the default (`glob:` may be written).
pub fn text_matches(pattern: &str, text: &str) -> bool {
    let text = normalise(text);
    if let Some(exact) = pattern.strip_prefix("exact:") {
        return normalise(exact) == text;
    }
    if let Some(re) = pattern.strip_prefix("regexp:") {
        return regex::Regex::new(re).is_ok_and(|r| r.is_match(&text));
    }
    let glob = normalise(pattern.strip_prefix("glob:").unwrap_or(pattern));
    let mut re = String::from("^");
    for c in glob.chars() {
        match c {
            '*' => re.push_str(".*"),
            '?' => re.push('.'),
            c => re.push_str(&regex::escape(&c.to_string())),
        }
    }
    re.push('$');
    regex::Regex::new(&re).is_ok_and(|r| r.is_match(&text))
}

/// Where a model may send the browser: a path under the base URL, or an http(s) URL; never a
/// local file or another scheme (a page under test could ask for `file:///…/credentials`).
pub fn web_url(base: &str, target: &str) -> Option<String> {
    let url = join_url(base, target);
    let lower = url.to_ascii_lowercase();
    (lower.starts_with("http://") || lower.starts_with("https://")).then_some(url)
}

/// `open`'s target: a whole URL as it is, else a path under the base URL.
pub fn join_url(base: &str, target: &str) -> String {
    if target.contains("://") || target.starts_with("about:") || target.starts_with("data:") {
        return target.to_string();
    }
    let base = base.trim_end_matches('/');
    match target.trim() {
        "" | "/" => format!("{base}/"),
        path if path.starts_with('/') => format!("{base}{path}"),
        path => format!("{base}/{path}"),
    }
}

/// Whether a `type` command types into a password field, whose value is never logged.
async fn is_secret_field(ctx: &StepContext<'_>, command: &Command) -> bool {
    if command.command != SeleneseCommand::Type {
        return false;
    }
    let kind = ctx
        .tab
        .property(&command.target, "type", Duration::from_millis(200))
        .await;
    matches!(kind, Ok(Value::String(t)) if t.eq_ignore_ascii_case("password"))
}

/// A `type` into a password field: how much was typed, not what.
fn describe_secret(command: &Command) -> String {
    let typed = command.value.as_deref().unwrap_or("").chars().count();
    format!("type {} ({typed} characters, hidden)", command.target)
}

fn describe_command(command: &Command) -> String {
    let name = serde_json::to_value(command.command)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    match &command.value {
        Some(value) => format!("{name} {} {value:?}", command.target),
        None => format!("{name} {}", command.target),
    }
}

fn describe_assertion(assertion: &Assertion) -> String {
    let kind = serde_json::to_value(assertion.kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let target = assertion.selector.as_deref().unwrap_or("body");
    let property = assertion
        .property
        .as_deref()
        .map(|p| format!(".{p}"))
        .unwrap_or_default();
    format!("{kind} {target}{property} {}", shown(&assertion.expected))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_model_may_only_send_the_browser_to_web_pages() {
        let base = "http://127.0.0.1:5173";
        assert_eq!(
            web_url(base, "/cart").as_deref(),
            Some("http://127.0.0.1:5173/cart")
        );
        assert_eq!(
            web_url(base, "https://example.com/x").as_deref(),
            Some("https://example.com/x")
        );
        assert_eq!(web_url(base, "file:///root/.aws/credentials"), None);
        assert_eq!(web_url(base, "data:text/html,hi"), None);
        assert_eq!(web_url(base, "about:blank"), None);
        assert_eq!(
            web_url(base, "javascript:alert(1)").as_deref(),
            Some("http://127.0.0.1:5173/javascript:alert(1)")
        );
    }

    use super::*;
    use serde_json::json;

    #[test]
    fn text_patterns_are_selenium_ide_s() {
        assert!(text_matches("Welcome, Ada", "  Welcome,\n Ada "));
        assert!(text_matches("Welcome*", "Welcome, Ada"));
        assert!(
            !text_matches("Welcome", "Welcome, Ada"),
            "a glob is the whole text"
        );
        assert!(text_matches("glob:W?lcome, *", "Welcome, Ada"));
        assert!(text_matches("regexp:^Wel.*Ada$", "Welcome, Ada"));
        assert!(text_matches("exact:a*b", "a*b"));
        assert!(!text_matches("exact:a*b", "axxb"));
        assert!(
            text_matches("1.5 (x)", "1.5 (x)"),
            "regex characters are literal"
        );
    }

    #[test]
    fn values_compare_as_a_user_means() {
        assert!(equal(&json!(3), &json!("3")));
        assert!(equal(&json!(3), &json!(3.0)));
        assert!(!equal(&json!(3), &json!("three")));
        assert!(equal(&json!(true), &json!(true)));
        assert!(equal(&json!(true), &json!("true")));
        assert!(equal(&json!("a  b"), &json!("a b")));
        assert!(!truthy(&json!(false)) && truthy(&json!("yes")) && !truthy(&json!("false")));
    }

    #[test]
    fn open_targets_join_the_base_url() {
        let base = "http://localhost:3000/";
        assert_eq!(join_url(base, "/login"), "http://localhost:3000/login");
        assert_eq!(join_url(base, "login"), "http://localhost:3000/login");
        assert_eq!(join_url(base, ""), "http://localhost:3000/");
        assert_eq!(join_url(base, "https://x.test/a"), "https://x.test/a");
    }
}
