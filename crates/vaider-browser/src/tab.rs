//! A tab driven step by step, for test plans: open a URL, find an element by a selector (CSS,
//! `text=…` or `role=…[name="…"]`) with auto-waiting, click it, type into it, read its text, a
//! property or whether it is visible, shoot the page, and keep what the page wrote to its
//! console. Clicks and keys are real input events (CDP), not `el.click()` from script, so a
//! button that ignores untrusted events behaves as it would for a user. The numbered snapshot
//! a model acts on, and its actions by number, are in `snapshot`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::page::CaptureScreenshotFormat;
use chromiumoxide::cdp::js_protocol::runtime::{EventConsoleApiCalled, EventExceptionThrown};
use chromiumoxide::element::Element;
use chromiumoxide::page::ScreenshotParams;
use chromiumoxide::Page;
use futures_util::StreamExt;
use serde_json::Value;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::guard::{Blocked, Refused};
use crate::url_policy::{Refusal, UrlPolicy};
use crate::{cdp, set_viewport, Browser, BrowserError, Viewport};

/// How often a missing element is looked for again while waiting.
const POLL: Duration = Duration::from_millis(100);
/// A console message is kept up to this many characters.
const MAX_MESSAGE: usize = 500;
/// The most console messages a tab keeps (a page logging in a loop must not fill memory).
const MAX_MESSAGES: usize = 200;

/// Finds the element a selector names and marks it (`data-vaider-found`), so that CDP can
/// address it by a CSS selector. Returns `{found, visible}`.
const FIND_JS: &str = include_str!("find.js");

/// A wait as Playwright prints it (`850ms`, `5.1s`).
fn waited_text(waited: Duration) -> String {
    vaider_core::job::duration_text(waited.as_millis() as u64)
}

/// What went wrong driving a tab: what was asked and what the page had instead.
#[derive(Debug, thiserror::Error)]
pub enum StepError {
    #[error("no element matches `{selector}` after {}", waited_text(*waited))]
    NotFound { selector: String, waited: Duration },
    #[error("`{selector}` is on the page but not visible after {}", waited_text(*waited))]
    NotVisible { selector: String, waited: Duration },
    #[error("`{selector}` is not a selector: use CSS (`#login`, `.card button`), `text=Sign in` or `role=button[name=\"Sign in\"]`")]
    BadSelector { selector: String },
    #[error("no element has ref {reference} in the latest snapshot: act on an element it lists")]
    UnknownRef { reference: u32 },
    #[error(
        "the element with ref {reference} is no longer visible: take a fresh look at the page"
    )]
    RefNotVisible { reference: u32 },
    #[error("`{key}` is not a key: use Enter, Tab, Escape, Backspace, ArrowUp, ArrowDown, ArrowLeft, ArrowRight, PageDown, or one character")]
    UnknownKey { key: String },
    #[error("{0}")]
    Browser(#[from] BrowserError),
}

/// One open tab and what its page has logged.
pub struct Tab {
    pub(crate) page: Page,
    /// The warden holds what the tab brings up while the tab lives.
    _hold: crate::warden::Hold,
    policy: Arc<UrlPolicy>,
    refused: Refused,
    console: Arc<Mutex<Vec<String>>>,
    listeners: Vec<JoinHandle<()>>,
}

impl Browser {
    /// A new blank tab of the viewport's size, its console listened to and every request it
    /// makes held to `policy` from the start.
    pub async fn open_tab(
        &self,
        viewport: Viewport,
        policy: UrlPolicy,
    ) -> Result<Tab, BrowserError> {
        crate::check_viewport(viewport)?;
        let page = self
            .browser
            .new_page("about:blank")
            .await
            .map_err(cdp("opening a tab"))?;
        set_viewport(&page, viewport).await?;
        let policy = Arc::new(self.resolving_as_browser(policy));
        let (guard, refused) = crate::guard::guard(&page, policy.clone()).await?;
        let target = page.target_id().inner().clone();
        let hold = self.warden.hold(&target, policy.clone(), refused.clone());
        let console = Arc::new(Mutex::new(Vec::new()));
        let mut listeners = listen_to_console(&page, &console).await?;
        listeners.push(guard);
        Ok(Tab {
            page,
            _hold: hold,
            policy,
            refused,
            console,
            listeners,
        })
    }
}

impl Tab {
    /// Opens `url` and waits for its load event, within `timeout`. A URL the policy refuses
    /// is not asked for; a redirect it refuses ends the navigation there.
    pub async fn open(&self, url: &str, timeout: Duration) -> Result<(), BrowserError> {
        self.policy.check_resolved(url).await?;
        let before = self.refused.lock().map_or(0, |r| r.len());
        let opened = tokio::time::timeout(timeout, self.page.goto(url)).await;
        // A refusal during this navigation (a redirect hop) is the reason it ended.
        let refused = self.refused.lock().ok().and_then(|r| {
            r.iter()
                .skip(before)
                .find(|b| b.navigation)
                .map(|b| b.refusal.clone())
        });
        if let Some(refusal) = refused {
            return Err(BrowserError::Refused(refusal));
        }
        match opened {
            Err(_) => Err(BrowserError::LoadTimeout { url: url.into() }),
            Ok(Err(source)) => Err(BrowserError::Navigate {
                url: url.into(),
                source,
            }),
            Ok(Ok(_)) => Ok(()),
        }
    }

    /// The first navigation of this tab the policy refused and not yet taken (a redirect, a
    /// link, a script changing the address).
    pub fn refused_navigation(&self) -> Option<Refusal> {
        let refused = self.refused.lock().ok()?;
        refused
            .iter()
            .find(|b| b.navigation)
            .map(|b| b.refusal.clone())
    }

    /// Every request refused since the last call.
    pub fn take_blocked(&self) -> Vec<Blocked> {
        self.refused
            .lock()
            .map(|mut r| std::mem::take(&mut *r))
            .unwrap_or_default()
    }

    /// The element `selector` names, waiting up to `timeout` for it to exist (and, when
    /// `visible`, to be visible).
    pub async fn wait_for(
        &self,
        selector: &str,
        visible: bool,
        timeout: Duration,
    ) -> Result<Element, StepError> {
        let start = Instant::now();
        loop {
            let state = self.find(selector).await?;
            if state.bad {
                return Err(StepError::BadSelector {
                    selector: selector.to_string(),
                });
            }
            if state.found && (state.visible || !visible) {
                let element = self
                    .page
                    .find_element("[data-vaider-found]")
                    .await
                    .map_err(cdp("reaching the element"))?;
                return Ok(element);
            }
            if start.elapsed() >= timeout {
                let (selector, waited) = (selector.to_string(), start.elapsed());
                return Err(match state.found {
                    true => StepError::NotVisible { selector, waited },
                    false => StepError::NotFound { selector, waited },
                });
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Whether `selector` matches an element now, and whether it is visible (no waiting).
    pub async fn probe(&self, selector: &str) -> Result<(bool, bool), BrowserError> {
        let state = self.find(selector).await?;
        Ok((state.found, state.visible))
    }

    /// Clicks the element with the mouse, once it is visible.
    pub async fn click(&self, selector: &str, timeout: Duration) -> Result<(), StepError> {
        let element = self.wait_for(selector, true, timeout).await?;
        element.click().await.map_err(cdp("clicking"))?;
        Ok(())
    }

    /// Replaces the field's value by typing `text` into it, key by key; a newline, a tab or
    /// Selenium IDE's `${KEY_ENTER}` ... presses that key ([`crate::snapshot::typed_parts`]).
    pub async fn type_into(
        &self,
        selector: &str,
        text: &str,
        timeout: Duration,
    ) -> Result<(), StepError> {
        let element = self.wait_for(selector, true, timeout).await?;
        element.click().await.map_err(cdp("focusing the field"))?;
        element
            .call_js_fn(
                "function() { if ('value' in this) { this.value = ''; this.dispatchEvent(new Event('input', {bubbles: true})); } }",
                false,
            )
            .await
            .map_err(cdp("clearing the field"))?;
        self.keys(&element, text).await
    }

    /// Selenium IDE's `sendKeys`: types `text` (and its keys) into the element as it is.
    pub async fn send_keys(
        &self,
        selector: &str,
        text: &str,
        timeout: Duration,
    ) -> Result<(), StepError> {
        let element = self.focused(selector, timeout).await?;
        self.keys(&element, text).await
    }

    /// Playwright's `locator.press`: focuses the element, then presses the key.
    pub async fn press_on(
        &self,
        selector: &str,
        key: &str,
        timeout: Duration,
    ) -> Result<(), StepError> {
        let element = self.focused(selector, timeout).await?;
        let named = crate::snapshot::typed_parts(key)
            .iter()
            .all(|p| matches!(p, crate::snapshot::Typed::Text(_)));
        match named {
            // A key by its name ("Enter", "ArrowDown", "a").
            true => self.press(key).await,
            // `${KEY_ENTER}` or a newline.
            false => self.keys(&element, key).await,
        }
    }

    /// The visible element, focused as Playwright focuses before it types.
    async fn focused(&self, selector: &str, timeout: Duration) -> Result<Element, StepError> {
        let element = self.wait_for(selector, true, timeout).await?;
        element
            .call_js_fn("function() { this.focus(); }", false)
            .await
            .map_err(cdp("focusing the element"))?;
        Ok(element)
    }

    async fn keys(&self, element: &Element, text: &str) -> Result<(), StepError> {
        for part in crate::snapshot::typed_parts(text) {
            match part {
                crate::snapshot::Typed::Text(text) => {
                    element.type_str(text).await.map_err(cdp("typing"))?;
                }
                crate::snapshot::Typed::Key(key) => self.press(&key).await?,
            }
        }
        Ok(())
    }

    /// The element's visible text (its `innerText`, or a field's value).
    pub async fn text(&self, selector: &str, timeout: Duration) -> Result<String, StepError> {
        let value = self.property(selector, "__text", timeout).await?;
        Ok(value.as_str().unwrap_or_default().to_string())
    }

    /// One of the element's DOM properties (`value`, `checked`, `href`, …); `__text` is its
    /// visible text.
    pub async fn property(
        &self,
        selector: &str,
        property: &str,
        timeout: Duration,
    ) -> Result<Value, StepError> {
        let element = self.wait_for(selector, false, timeout).await?;
        let name = serde_json::to_string(property).unwrap_or_default();
        let function = format!(
            "function() {{ const p = {name}; if (p === '__text') {{ return ('value' in this && this.tagName !== 'BUTTON' && this.tagName !== 'LI') ? String(this.value) : this.innerText; }} const v = this[p]; return (v === undefined || typeof v === 'function') ? null : v; }}"
        );
        let returned = element
            .call_js_fn(function, false)
            .await
            .map_err(cdp("reading the element"))?;
        Ok(returned.result.value.unwrap_or(Value::Null))
    }

    /// The page's visible text, for a model to read beside its screenshot.
    pub async fn visible_text(&self) -> Result<String, BrowserError> {
        let result = self
            .page
            .evaluate("document.body ? document.body.innerText : ''")
            .await
            .map_err(cdp("reading the page's text"))?;
        Ok(result.into_value::<String>().unwrap_or_default())
    }

    /// A PNG of the viewport.
    pub async fn screenshot(&self) -> Result<Vec<u8>, BrowserError> {
        let params = ScreenshotParams::builder()
            .format(CaptureScreenshotFormat::Png)
            .build();
        self.page
            .screenshot(params)
            .await
            .map_err(cdp("taking the screenshot"))
    }

    /// The address the tab shows now.
    pub async fn url(&self) -> Option<String> {
        self.page.url().await.ok().flatten()
    }

    /// What the page logged since the last call (errors and warnings first-class, as a
    /// developer reads them in the console).
    pub fn take_console(&self) -> Vec<String> {
        self.console
            .lock()
            .map(|mut messages| std::mem::take(&mut *messages))
            .unwrap_or_default()
    }

    /// Closes the tab.
    pub async fn close(self) {
        for listener in &self.listeners {
            listener.abort();
        }
        if let Err(error) = self.page.clone().close().await {
            tracing::debug!(%error, "closing the tab");
        }
    }

    async fn find(&self, selector: &str) -> Result<Found, BrowserError> {
        let argument = serde_json::to_string(selector).unwrap_or_default();
        let result = self
            .page
            .evaluate(format!("({FIND_JS})({argument})"))
            .await
            .map_err(cdp("looking for the element"))?;
        Ok(result.into_value::<Found>().unwrap_or_default())
    }
}

#[derive(Debug, Default, serde::Deserialize)]
struct Found {
    found: bool,
    visible: bool,
    #[serde(default)]
    bad: bool,
}

/// Keeps the page's console messages and uncaught exceptions, each as one line.
async fn listen_to_console(
    page: &Page,
    console: &Arc<Mutex<Vec<String>>>,
) -> Result<Vec<JoinHandle<()>>, BrowserError> {
    let mut calls = page
        .event_listener::<EventConsoleApiCalled>()
        .await
        .map_err(cdp("listening to the console"))?;
    let mut exceptions = page
        .event_listener::<EventExceptionThrown>()
        .await
        .map_err(cdp("listening to the console"))?;
    let keep = |console: Arc<Mutex<Vec<String>>>| {
        move |line: String| {
            if let Ok(mut lines) = console.lock() {
                if lines.len() < MAX_MESSAGES {
                    lines.push(line.chars().take(MAX_MESSAGE).collect());
                }
            }
        }
    };
    let keep_call = keep(console.clone());
    let keep_exception = keep(console.clone());
    Ok(vec![
        tokio::spawn(async move {
            while let Some(event) = calls.next().await {
                let text: Vec<String> = event
                    .args
                    .iter()
                    .map(|a| match &a.value {
                        Some(Value::String(s)) => s.clone(),
                        Some(other) => other.to_string(),
                        None => a.description.clone().unwrap_or_default(),
                    })
                    .collect();
                keep_call(format!(
                    "{}: {}",
                    format!("{:?}", event.r#type).to_lowercase(),
                    text.join(" ")
                ));
            }
        }),
        tokio::spawn(async move {
            while let Some(event) = exceptions.next().await {
                let details = &event.exception_details;
                let text = details
                    .exception
                    .as_ref()
                    .and_then(|e| e.description.clone())
                    .unwrap_or_else(|| details.text.clone());
                keep_exception(format!("error: {text}"));
            }
        }),
    ])
}
