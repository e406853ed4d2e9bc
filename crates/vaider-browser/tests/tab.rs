//! A tab driven as a test plan drives it, in the real headless Chromium of this machine, on a
//! small login page served on loopback by the test: selectors of the three forms, auto-waiting
//! for an element that appears late, real clicks and typing, text and properties, visibility,
//! console messages, and errors that say what was looked for.

mod common;

use std::time::Duration;

use common::serve;

use vaider_browser::{Browser, StepError, Viewport};

const LOGIN_PAGE: &str = r#"<!doctype html><html><body>
<h1>Sign in</h1>
<form id="login" onsubmit="event.preventDefault(); signIn();">
  <label for="email">Email</label><input id="email" type="email">
  <button type="submit" aria-label="Sign in">Log in</button>
</form>
<p id="greeting" hidden></p>
<div id="late"></div>
<span id="ghost" style="visibility:hidden">boo</span>
<script>
  function signIn() {
    const g = document.getElementById('greeting');
    g.textContent = 'Welcome, ' + document.getElementById('email').value;
    g.hidden = false;
    console.error('signed in as', document.getElementById('email').value);
  }
  setTimeout(() => { document.getElementById('late').innerHTML = '<button class="late">Late</button>'; }, 700);
  console.warn('page ready');
</script></body></html>"#;

const WAIT: Duration = Duration::from_secs(5);

#[tokio::test]
async fn a_login_is_driven_with_real_input_and_read_back() {
    let base = serve(LOGIN_PAGE).await;
    let browser = Browser::launch().await.expect("Chromium starts");
    let tab = browser
        .open_tab(Viewport::default(), common::policy(&base))
        .await
        .unwrap();
    tab.open(&base, WAIT).await.unwrap();

    // The three selector forms find the same kinds of things.
    assert_eq!(tab.text("h1", WAIT).await.unwrap(), "Sign in");
    assert_eq!(tab.text("text=sign in", WAIT).await.unwrap(), "Sign in");
    tab.type_into("role=textbox[name=\"Email\"]", "ada@example.com", WAIT)
        .await
        .unwrap();
    let value = tab.property("#email", "value", WAIT).await.unwrap();
    assert_eq!(value, "ada@example.com");
    // Typing replaces what was there.
    tab.type_into("#email", "grace@example.com", WAIT)
        .await
        .unwrap();
    assert_eq!(tab.text("#email", WAIT).await.unwrap(), "grace@example.com");

    assert_eq!(tab.probe("#greeting").await.unwrap(), (true, false));
    tab.click("role=button[name=\"Sign in\"]", WAIT)
        .await
        .unwrap();
    assert_eq!(
        tab.text("#greeting", WAIT).await.unwrap(),
        "Welcome, grace@example.com"
    );
    assert_eq!(tab.probe("#greeting").await.unwrap(), (true, true));

    // Auto-waiting: the late button appears after 0.7 s and is clicked.
    tab.click("text=Late", WAIT).await.unwrap();

    // The page's console, errors included, in order.
    let console = tab.take_console();
    assert_eq!(
        console,
        [
            "warning: page ready",
            "error: signed in as grace@example.com"
        ]
    );
    assert!(tab.take_console().is_empty(), "taken once");

    // The page's text and a shot for a model.
    assert!(tab.visible_text().await.unwrap().contains("Welcome, grace"));
    let png = tab.screenshot().await.unwrap();
    let shot = image::load_from_memory(&png).unwrap();
    assert_eq!((shot.width(), shot.height()), (1280, 800));
    tab.close().await;
    browser.close().await;
}

#[tokio::test]
async fn a_missing_or_hidden_element_and_a_bad_selector_say_what_was_looked_for() {
    let base = serve(LOGIN_PAGE).await;
    let browser = Browser::launch().await.expect("Chromium starts");
    let tab = browser
        .open_tab(Viewport::default(), common::policy(&base))
        .await
        .unwrap();
    tab.open(&base, WAIT).await.unwrap();
    let short = Duration::from_millis(300);

    let missing = tab.click("#nothing", short).await.unwrap_err();
    assert!(matches!(missing, StepError::NotFound { .. }));
    // The wait reads as Playwright prints it: "after 312ms", not "after 0.312 s".
    let text = missing.to_string();
    let waited = text
        .strip_prefix("no element matches `#nothing` after ")
        .unwrap_or_default();
    let as_playwright = match waited.strip_suffix("ms") {
        Some(ms) => ms.parse::<u64>().is_ok_and(|ms| ms >= 300),
        // A slow machine may overshoot the wait past a second: "1.2s".
        None => waited.strip_suffix('s').is_some_and(|s| {
            s.parse::<f64>().is_ok() && s.split('.').nth(1).map(str::len) == Some(1)
        }),
    };
    assert!(as_playwright, "{missing}");
    let hidden = tab.click("#ghost", short).await.unwrap_err();
    assert!(matches!(hidden, StepError::NotVisible { .. }), "{hidden}");
    // A hidden element's text can still be read (assertions on hidden text are the plan's).
    assert_eq!(tab.text("#ghost", short).await.unwrap(), "");
    let bad = tab.click("div[", short).await.unwrap_err();
    assert!(matches!(bad, StepError::BadSelector { .. }), "{bad}");
    assert!(bad.to_string().contains("text=Sign in"), "{bad}");
    browser.close().await;
}
