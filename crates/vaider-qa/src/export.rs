//! A plan as a Playwright Test spec (`vaider plan export --format playwright`), so a plan that
//! passes in Vaider also runs with plain `npx playwright test` against the same app. Scripted
//! steps translate one to one: Selenese commands to locator actions and web-first assertions,
//! unit assertions to `expect(...)`, selectors (CSS, `text=`, `role=…[name="…"]`) to
//! `page.locator` / `getByText` / `getByRole`. A step a model performs or judges cannot be
//! written as code: it becomes a marked, empty `test.step` with an annotation, never dropped.

use serde_json::Value;
use vaider_browser::{typed_parts, Typed};

use crate::plan::{Assertion, AssertionKind, Command, SeleneseCommand, StepKind, TestPlan};
use crate::secret_values::SecretRef;
use crate::steps::plain;

/// The plan's secrets: where each `{{secret:NAME}}` is read when the spec runs.
type Secrets = std::collections::BTreeMap<String, SecretRef>;

/// The plan `what` names: a plan's id, a run's id (the plan it ran), or a plan's JSON file.
pub fn find_plan(store: &crate::QaStore, what: &str) -> Result<TestPlan, String> {
    let path = std::path::Path::new(what);
    if what.ends_with(".json") && path.is_file() {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{what}: {e}"))?;
        return serde_json::from_str(&text)
            .map_err(|e| format!("{what} is not a test plan (contracts.md §3): {e}"));
    }
    match store.plan(what) {
        Ok((plan, _)) => Ok(plan),
        Err(not_a_plan) => match store.run(what) {
            Ok(run) => store
                .plan(&run.plan_id)
                .map(|(plan, _)| plan)
                .map_err(|e| e.to_string()),
            Err(_) => Err(not_a_plan.to_string()),
        },
    }
}

/// The spec file's text for `plan`.
pub fn playwright_spec(plan: &TestPlan) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "// Exported by Vaider from the plan {} ({}): `vaider plan export {} --format playwright`.\n",
        comment(&plan.name),
        comment(&plan.id),
        comment(&plan.id)
    ));
    out.push_str("// Run it with `npx playwright test`; BASE_URL overrides the plan's base URL.\n");
    out.push_str("import { test, expect } from '@playwright/test';\n\n");
    out.push_str(&format!(
        "const BASE_URL = (process.env.BASE_URL || {}).replace(/\\/$/, '');\n\n",
        js(&plan.base_url)
    ));
    out.push_str(&format!(
        "test({}, async ({{ page }}) => {{\n",
        js(&plan.name)
    ));
    for step in &plan.steps {
        out.push_str(&format!(
            "  await test.step({}, async () => {{\n",
            js(&step.name)
        ));
        for line in step_body(&step.kind, &plan.secrets) {
            out.push_str(&format!("    {line}\n"));
        }
        out.push_str("  });\n");
    }
    out.push_str("});\n");
    out
}

fn step_body(kind: &StepKind, secrets: &Secrets) -> Vec<String> {
    match kind {
        StepKind::Selenese { commands } => {
            commands.iter().flat_map(|c| command(c, secrets)).collect()
        }
        StepKind::UnitAssertion { assertions } => assertions.iter().map(assertion).collect(),
        StepKind::AgenticBrowsing {
            instruction,
            expected_outcome,
            ..
        } => agentic(
            "agentic_browsing",
            instruction,
            expected_outcome.as_deref(),
            "performed by a model in Vaider",
        ),
        StepKind::AgenticAssertion {
            instruction,
            criteria,
            ..
        } => agentic(
            "agentic_assertion",
            instruction,
            Some(criteria),
            "checked by a vision model in Vaider",
        ),
    }
}

/// A model's step: a comment saying what it was and an annotation the report shows.
fn agentic(kind: &str, instruction: &str, expected: Option<&str>, who: &str) -> Vec<String> {
    let mut lines = vec![format!(
        "// agentic step ({kind}): {}; {who}; not exported.",
        comment(instruction)
    )];
    if let Some(expected) = expected {
        lines.push(format!("// expected: {}", comment(expected)));
    }
    lines.push(format!(
        "test.info().annotations.push({{ type: 'vaider-agentic-step', description: {} }});",
        js(&format!("not exported ({who}): {instruction}"))
    ));
    lines
}

fn command(command: &Command, secrets: &Secrets) -> Vec<String> {
    let target = command.target.as_str();
    let value = command.value.as_deref().unwrap_or_default();
    let at = || locator(target);
    match command.command {
        SeleneseCommand::Open => vec![format!("await page.goto({});", url(target))],
        SeleneseCommand::Click => vec![format!("await {}.click();", at())],
        SeleneseCommand::Type => typed(&at(), value, true, secrets),
        SeleneseCommand::SendKeys => typed(&at(), value, false, secrets),
        SeleneseCommand::Press => match typed_parts(value).iter().all(is_text) {
            // A key by its name, as Playwright names keys.
            true => vec![format!("await {}.press({});", at(), js(value))],
            false => typed(&at(), value, false, secrets),
        },
        SeleneseCommand::WaitForElement | SeleneseCommand::AssertVisible => {
            vec![format!("await expect({}).toBeVisible();", at())]
        }
        SeleneseCommand::AssertText => vec![format!(
            "await expect({}).toHaveText({}, {{ useInnerText: true }});",
            at(),
            text_pattern(value)
        )],
    }
}

fn is_text(part: &Typed) -> bool {
    matches!(part, Typed::Text(_))
}

/// `type` (replacing the value: `fill`) and `sendKeys` (adding to it), with their keys pressed.
fn typed(at: &str, value: &str, replace: bool, secrets: &Secrets) -> Vec<String> {
    let mut lines = Vec::new();
    let parts = typed_parts(value);
    if replace && !matches!(parts.first(), Some(Typed::Text(_))) {
        lines.push(format!("await {at}.fill('');"));
    }
    for (index, part) in parts.iter().enumerate() {
        lines.push(match part {
            Typed::Text(text) if replace && index == 0 => {
                format!("await {at}.fill({});", with_secrets(text, secrets))
            }
            Typed::Text(text) => format!(
                "await {at}.pressSequentially({});",
                with_secrets(text, secrets)
            ),
            Typed::Key(key) => format!("await {at}.press({});", js(key)),
        });
    }
    lines
}

fn assertion(assertion: &Assertion) -> String {
    let at = locator(assertion.selector.as_deref().unwrap_or("body"));
    let expected = &assertion.expected;
    let property = assertion.property.as_deref();
    match (assertion.kind, property) {
        (AssertionKind::Exists, _) => match truthy(expected) {
            true => format!("await expect({at}).toBeAttached();"),
            false => format!("await expect({at}).not.toBeAttached();"),
        },
        (AssertionKind::Visible, _) => match truthy(expected) {
            true => format!("await expect({at}).toBeVisible();"),
            false => format!("await expect({at}).not.toBeVisible();"),
        },
        (AssertionKind::Equals, Some(p)) => {
            format!(
                "await expect({at}).toHaveJSProperty({}, {expected});",
                js(p)
            )
        }
        (AssertionKind::Equals, None) => format!(
            "await expect({at}).toHaveText({}, {{ useInnerText: true }});",
            js(&plain(expected))
        ),
        (AssertionKind::Contains, None) => format!(
            "await expect({at}).toContainText({}, {{ useInnerText: true }});",
            js(&plain(expected))
        ),
        (AssertionKind::Matches, None) => format!(
            "await expect({at}).toHaveText({}, {{ useInnerText: true }});",
            regex_literal(&plain(expected), "")
        ),
        (AssertionKind::Contains, Some(p)) => format!(
            "await expect.poll(() => {at}.evaluate((e, p) => String(e[p]), {})).toContain({});",
            js(p),
            js(&plain(expected))
        ),
        (AssertionKind::Matches, Some(p)) => format!(
            "await expect.poll(() => {at}.evaluate((e, p) => String(e[p]), {})).toMatch({});",
            js(p),
            regex_literal(&plain(expected), "")
        ),
    }
}

/// A plan's selector as a Playwright locator. The plan acts on the first element a selector
/// matches, hence `.first()` (Playwright's locators are strict).
pub fn locator(selector: &str) -> String {
    let selector = selector.trim();
    if let Some(text) = selector.strip_prefix("text=") {
        let text = text.trim();
        return match text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
            Some(exact) => format!("page.getByText({}, {{ exact: true }}).first()", js(exact)),
            // The whole text, ignoring case, as the plan's `text=` means.
            None => format!(
                "page.getByText({}).first()",
                regex_literal(&format!("^{}$", regex::escape(text)), "i")
            ),
        };
    }
    if let Some(role) = selector.strip_prefix("role=") {
        let (role, name) = match role.split_once('[') {
            Some((role, rest)) => (role.trim(), role_name(rest)),
            None => (role.trim(), None),
        };
        return match name {
            Some(name) => format!(
                "page.getByRole({}, {{ name: {}, exact: true }}).first()",
                js(role),
                js(&name)
            ),
            None => format!("page.getByRole({}).first()", js(role)),
        };
    }
    let css = selector.strip_prefix("css=").unwrap_or(selector);
    format!("page.locator({}).first()", js(css))
}

/// `name="Sign in"]` → `Sign in`.
fn role_name(rest: &str) -> Option<String> {
    let inner = rest.trim().strip_suffix(']')?.trim();
    let value = inner
        .strip_prefix("name")?
        .trim_start()
        .strip_prefix('=')?
        .trim();
    Some(value.trim_matches('"').to_string())
}

/// Selenium IDE's text pattern (`exact:`, `regexp:`, or a glob on the whole text) as
/// `toHaveText`'s expected value.
pub fn text_pattern(pattern: &str) -> String {
    if let Some(exact) = pattern.strip_prefix("exact:") {
        return js(exact);
    }
    if let Some(re) = pattern.strip_prefix("regexp:") {
        return regex_literal(re, "");
    }
    let glob = pattern.strip_prefix("glob:").unwrap_or(pattern);
    if !glob.contains(['*', '?']) {
        return js(glob);
    }
    let mut re = String::from("^");
    for c in glob
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
    {
        match c {
            '*' => re.push_str(".*"),
            '?' => re.push('.'),
            c => re.push_str(&regex::escape(&c.to_string())),
        }
    }
    re.push('$');
    regex_literal(&re, "")
}

/// `open`'s target: a whole URL as written, else a path under BASE_URL.
fn url(target: &str) -> String {
    let target = target.trim();
    if target.contains("://") || target.starts_with("about:") || target.starts_with("data:") {
        return js(target);
    }
    let path = match target {
        "" | "/" => "/".to_string(),
        path if path.starts_with('/') => path.to_string(),
        path => format!("/{path}"),
    };
    format!("BASE_URL + {}", js(&path))
}

/// A typed value as a JavaScript expression: `{{secret:NAME}}` is read when the spec runs from
/// the environment variable the plan names for it (NAME when it names a keychain entry, which a
/// spec cannot read); the value itself is never written into the spec.
fn with_secrets(text: &str, secrets: &Secrets) -> String {
    let mut parts = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("{{secret:") {
        let Some(len) = rest[start..].find("}}") else {
            break;
        };
        if start > 0 {
            parts.push(js(&rest[..start]));
        }
        let name = rest[start + "{{secret:".len()..start + len].trim();
        let var = secrets
            .get(name)
            .and_then(|r| r.env.as_deref())
            .unwrap_or(name);
        parts.push(format!("(process.env[{}] ?? '')", js(var)));
        rest = &rest[start + len + 2..];
    }
    if !rest.is_empty() || parts.is_empty() {
        parts.push(js(rest));
    }
    parts.join(" + ")
}

/// A JavaScript string literal (JSON's is one).
fn js(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "''".into())
}

/// A JavaScript regular expression literal.
fn regex_literal(source: &str, flags: &str) -> String {
    let mut escaped = String::new();
    let mut chars = source.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                escaped.push('\\');
                if let Some(next) = chars.next() {
                    escaped.push(next);
                }
            }
            '/' => escaped.push_str("\\/"),
            '\n' => escaped.push_str("\\n"),
            c => escaped.push(c),
        }
    }
    if escaped.is_empty() {
        escaped.push_str("(?:)");
    }
    format!("/{escaped}/{flags}")
}

/// Text for a `//` comment: one line.
fn comment(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn truthy(value: &Value) -> bool {
    match value {
        Value::Bool(b) => *b,
        Value::String(s) => !matches!(s.trim(), "false" | "0" | "no" | ""),
        Value::Number(n) => n.as_f64().is_some_and(|n| n != 0.0),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_become_playwright_locators() {
        assert_eq!(
            locator(".todo-list li"),
            r#"page.locator(".todo-list li").first()"#
        );
        assert_eq!(locator("css=.a"), r#"page.locator(".a").first()"#);
        assert_eq!(
            locator("text=Sign in"),
            r#"page.getByText(/^Sign in$/i).first()"#
        );
        assert_eq!(
            locator(r#"text="Sign in""#),
            r#"page.getByText("Sign in", { exact: true }).first()"#
        );
        assert_eq!(
            locator(r#"role=button[name="Sign in"]"#),
            r#"page.getByRole("button", { name: "Sign in", exact: true }).first()"#
        );
        assert_eq!(locator("role=main"), r#"page.getByRole("main").first()"#);
    }

    #[test]
    fn typed_values_fill_then_press_their_keys() {
        let none = Secrets::new();
        let secrets = Secrets::from([(
            "PASS".to_string(),
            SecretRef {
                env: Some("SHOP_PASSWORD".into()),
                keychain: None,
                origin: None,
                fields: Vec::new(),
            },
        )]);
        assert_eq!(
            typed("f", "milk\n", true, &none),
            [r#"await f.fill("milk");"#, r#"await f.press("Enter");"#]
        );
        assert_eq!(
            typed("f", "${KEY_ENTER}a", true, &none),
            [
                "await f.fill('');",
                r#"await f.press("Enter");"#,
                r#"await f.pressSequentially("a");"#
            ]
        );
        assert_eq!(
            typed("f", "Call ", false, &none),
            [r#"await f.pressSequentially("Call ");"#]
        );
        assert_eq!(
            typed("f", "{{secret:PASS}}\t", true, &secrets),
            [
                r#"await f.fill((process.env["SHOP_PASSWORD"] ?? ''));"#,
                r#"await f.press("Tab");"#
            ]
        );
    }

    #[test]
    fn selenium_text_patterns_become_to_have_text_values() {
        assert_eq!(text_pattern("exact:2 items"), r#""2 items""#);
        assert_eq!(text_pattern("Welcome, Ada"), r#""Welcome, Ada""#);
        assert_eq!(text_pattern("3*items left"), r"/^3.*items left$/");
        assert_eq!(text_pattern("regexp:a/b"), r"/a\/b/");
    }

    #[test]
    fn an_agentic_step_is_marked_not_dropped() {
        let lines = step_body(
            &StepKind::AgenticAssertion {
                instruction: "look at the list".into(),
                criteria: "the todo is struck through".into(),
                context: None,
            },
            &Secrets::new(),
        );
        assert!(lines[0].starts_with("// agentic step (agentic_assertion): look at the list"));
        assert!(lines[0].contains("checked by a vision model in Vaider; not exported"));
        assert!(lines.iter().any(|l| l.contains("vaider-agentic-step")));
    }
}
