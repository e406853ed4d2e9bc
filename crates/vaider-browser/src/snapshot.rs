//! The page as a model acting on it reads it: a compact accessibility snapshot (the visible
//! elements a user can act on or read, one numbered line each), and the actions a model names
//! by those numbers: click, type, press a key, scroll. Clicks and keys are real input events
//! (CDP), as in the rest of the tab's steps.

use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::input::{DispatchKeyEventParams, DispatchKeyEventType};
use tokio::time::Instant;

use crate::tab::{StepError, Tab};
use crate::{cdp, BrowserError};

/// Numbers the visible elements, stamps each number on its element (`data-vaider-ref`) and
/// returns their lines.
const SNAPSHOT_JS: &str = include_str!("snapshot.js");

/// The most elements a snapshot lists: a page with thousands of rows is read from its start.
const MAX_ELEMENTS: usize = 200;
/// The most characters of a snapshot's lines, so the prompt stays small whatever the page.
const MAX_CHARS: usize = 12_000;

/// The page's visible elements, one line each: `[3] button "Sign in"`.
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize)]
pub struct Snapshot {
    /// `[ref] role "name"` and, for a field, its `value="…"`; a password field is marked
    /// `secret` and its value is never shown.
    pub lines: Vec<String>,
    /// Elements left out because the snapshot was full.
    pub more: usize,
}

impl Snapshot {
    /// The lines, with a last one saying how many elements were left out, if any.
    pub fn text(&self) -> String {
        let mut text = self.lines.join("\n");
        if self.more > 0 {
            text.push_str(&format!(
                "\n… {} more elements not listed (scroll to reach them)",
                self.more
            ));
        }
        text
    }

    /// Drops the lines past `max_chars`, counting them as left out.
    fn capped(mut self, max_chars: usize) -> Snapshot {
        let mut used = 0;
        let keep = self
            .lines
            .iter()
            .take_while(|line| {
                used += line.chars().count() + 1;
                used <= max_chars
            })
            .count();
        self.more += self.lines.len() - keep;
        self.lines.truncate(keep);
        self
    }
}

/// Which way to scroll the page: by most of a screen, as a user does with Page Down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScrollDirection {
    Up,
    Down,
}

impl Tab {
    /// The page's visible elements, numbered afresh: the refs of an earlier snapshot are gone.
    pub async fn snapshot(&self) -> Result<Snapshot, BrowserError> {
        let result = self
            .page
            .evaluate(format!("({SNAPSHOT_JS})({MAX_ELEMENTS})"))
            .await
            .map_err(cdp("listing the page's elements"))?;
        let snapshot = result.into_value::<Snapshot>().unwrap_or_default();
        Ok(snapshot.capped(MAX_CHARS))
    }

    /// Clicks the element numbered `reference` by the latest snapshot.
    pub async fn click_ref(&self, reference: u32) -> Result<(), StepError> {
        self.click(&ref_selector(reference), Duration::ZERO)
            .await
            .map_err(|e| unknown_ref(e, reference))
    }

    /// Replaces the value of the field numbered `reference` by typing `text`, key by key.
    pub async fn type_ref(&self, reference: u32, text: &str) -> Result<(), StepError> {
        self.type_into(&ref_selector(reference), text, Duration::ZERO)
            .await
            .map_err(|e| unknown_ref(e, reference))
    }

    /// Presses a key where the focus is: `Enter`, `Tab`, `Escape`, `ArrowDown`, `Backspace`…
    /// or one character. Down and up are real key events, so a form submits on Enter.
    pub async fn press(&self, key: &str) -> Result<(), StepError> {
        let name = key_name(key);
        let definition = chromiumoxide::keys::get_key_definition(&name).ok_or_else(|| {
            StepError::UnknownKey {
                key: key.to_string(),
            }
        })?;
        let text = definition
            .text
            .or((definition.key.chars().count() == 1).then_some(definition.key));
        let event = |kind: DispatchKeyEventType| {
            let types_text = kind == DispatchKeyEventType::KeyDown;
            let mut builder = DispatchKeyEventParams::builder()
                .r#type(kind)
                .key(definition.key)
                .code(definition.code)
                .windows_virtual_key_code(definition.key_code)
                .native_virtual_key_code(definition.key_code);
            if let (true, Some(text)) = (types_text, text) {
                builder = builder.text(text);
            }
            builder.build().map_err(|reason| StepError::UnknownKey {
                key: format!("{key} ({reason})"),
            })
        };
        // A key that types nothing goes down raw, as Chromium's own keyboard sends it.
        let down = match text {
            Some(_) => DispatchKeyEventType::KeyDown,
            None => DispatchKeyEventType::RawKeyDown,
        };
        for kind in [down, DispatchKeyEventType::KeyUp] {
            self.page
                .execute(event(kind)?)
                .await
                .map_err(cdp("pressing a key"))?;
        }
        Ok(())
    }

    /// Scrolls the page by most of a screen.
    pub async fn scroll(&self, direction: ScrollDirection) -> Result<(), BrowserError> {
        let sign = match direction {
            ScrollDirection::Up => "-",
            ScrollDirection::Down => "",
        };
        self.page
            .evaluate(format!(
                "window.scrollBy({{top: {sign}Math.round(innerHeight * 0.8), behavior: 'instant'}})"
            ))
            .await
            .map_err(cdp("scrolling"))?;
        Ok(())
    }

    /// Waits until the page (a new one, after a click that navigates) has loaded, up to
    /// `timeout`; a page still loading then is left as it is.
    pub async fn wait_until_loaded(&self, timeout: Duration) -> Result<(), BrowserError> {
        let start = Instant::now();
        loop {
            let state = self
                .page
                .evaluate("document.readyState")
                .await
                .map_err(cdp("reading the page's state"))?;
            let loaded = state.into_value::<String>().is_ok_and(|s| s == "complete");
            if loaded || start.elapsed() >= timeout {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

pub(crate) fn ref_selector(reference: u32) -> String {
    format!("[data-vaider-ref=\"{reference}\"]")
}

/// An element the snapshot's number no longer names is said in the model's words, the ref.
fn unknown_ref(error: StepError, reference: u32) -> StepError {
    match error {
        StepError::NotFound { .. } => StepError::UnknownRef { reference },
        StepError::NotVisible { .. } => StepError::RefNotVisible { reference },
        other => other,
    }
}

/// The key's name as CDP's US keyboard knows it, from the ways a model may write it.
/// One part of a `type` value: text typed as it is, or a key pressed.
#[derive(Debug, Clone, PartialEq)]
pub enum Typed {
    Text(String),
    Key(String),
}

/// A `type` value in parts, as Playwright's `fill` then `press` would do it: a newline presses
/// Enter, a tab character Tab, and Selenium IDE's `${KEY_ENTER}`, `${KEY_TAB}`, `${KEY_ESC}`,
/// `${KEY_DOWN}` ... their key. An unknown `${KEY_…}` stays text.
pub fn typed_parts(text: &str) -> Vec<Typed> {
    let mut parts = Vec::new();
    let mut plain = String::new();
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        let key = match c {
            '\n' | '\r' => Some(("Enter".to_string(), c.len_utf8())),
            '\t' => Some(("Tab".to_string(), 1)),
            '$' => selenium_key(rest),
            _ => None,
        };
        match key {
            Some((name, len)) => {
                if !plain.is_empty() {
                    parts.push(Typed::Text(std::mem::take(&mut plain)));
                }
                // "\r\n" is one Enter.
                let len = if rest.starts_with("\r\n") { 2 } else { len };
                parts.push(Typed::Key(name));
                rest = &rest[len..];
            }
            None => {
                plain.push(c);
                rest = &rest[c.len_utf8()..];
            }
        }
    }
    if !plain.is_empty() {
        parts.push(Typed::Text(plain));
    }
    parts
}

/// `${KEY_NAME}` at the start of `text`: the key's name and the token's length.
fn selenium_key(text: &str) -> Option<(String, usize)> {
    let inner = text.strip_prefix("${KEY_")?;
    let end = inner.find('}')?;
    let name = key_name(&inner[..end]);
    let known = name.chars().count() == 1
        || chromiumoxide::keys::get_key_definition(&name).is_some() && name != inner[..end];
    known.then(|| (name, "${KEY_".len() + end + 1))
}

fn key_name(key: &str) -> String {
    let trimmed = key.trim();
    if trimmed.chars().count() == 1 {
        return trimmed.to_string();
    }
    let known = match trimmed
        .to_ascii_lowercase()
        .replace([' ', '_', '-'], "")
        .as_str()
    {
        "enter" | "return" => "Enter",
        "tab" => "Tab",
        "escape" | "esc" => "Escape",
        "backspace" => "Backspace",
        "delete" | "del" => "Delete",
        "space" | "spacebar" => " ",
        "arrowup" | "up" => "ArrowUp",
        "arrowdown" | "down" => "ArrowDown",
        "arrowleft" | "left" => "ArrowLeft",
        "arrowright" | "right" => "ArrowRight",
        "home" => "Home",
        "end" => "End",
        "pageup" => "PageUp",
        "pagedown" => "PageDown",
        _ => return trimmed.to_string(),
    };
    known.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typed_value_presses_enter_tab_and_seleniums_keys() {
        let text = |t: &str| Typed::Text(t.into());
        let key = |k: &str| Typed::Key(k.into());
        assert_eq!(typed_parts("milk\n"), [text("milk"), key("Enter")]);
        assert_eq!(
            typed_parts("a\tb${KEY_ENTER}${KEY_ESC}"),
            [
                text("a"),
                key("Tab"),
                text("b"),
                key("Enter"),
                key("Escape")
            ]
        );
        assert_eq!(typed_parts("x\r\ny"), [text("x"), key("Enter"), text("y")]);
        assert_eq!(typed_parts("$5 ${KEY_NOPE}"), [text("$5 ${KEY_NOPE}")]);
    }

    #[test]
    fn keys_are_named_as_the_keyboard_knows_them() {
        for (written, name) in [
            ("enter", "Enter"),
            ("Enter", "Enter"),
            ("ESC", "Escape"),
            ("arrow down", "ArrowDown"),
            ("Page_Down", "PageDown"),
            ("a", "a"),
            (" x ", "x"),
            ("F5", "F5"),
        ] {
            assert_eq!(key_name(written), name, "{written}");
        }
        assert!(chromiumoxide::keys::get_key_definition(key_name("enter")).is_some());
        assert!(chromiumoxide::keys::get_key_definition(key_name("Hyper")).is_none());
    }

    #[test]
    fn a_full_snapshot_says_how_much_was_left_out() {
        let snapshot = Snapshot {
            lines: vec!["[1] button \"A\"".into(), "[2] button \"B\"".into()],
            more: 3,
        }
        .capped(20);
        assert_eq!(snapshot.lines, ["[1] button \"A\""]);
        assert_eq!(snapshot.more, 4);
        assert!(snapshot
            .text()
            .ends_with("4 more elements not listed (scroll to reach them)"));
        let whole = Snapshot {
            lines: vec!["[1] link \"Home\"".into()],
            more: 0,
        };
        assert_eq!(whole.text(), "[1] link \"Home\"");
    }
}
