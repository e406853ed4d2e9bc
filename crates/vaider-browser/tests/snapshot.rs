//! The numbered snapshot a model acts on, in the real headless Chromium of this machine, on a
//! small page served on loopback by the test: what it lists and how, a password's value never
//! shown, and the actions by ref (click, type, a key, scrolling) done with real input.

mod common;

use std::time::Duration;

use common::serve;

use vaider_browser::{Browser, ScrollDirection, StepError, Viewport};

const PAGE: &str = r#"<!doctype html><html><body>
<h1>Sign in</h1>
<form id="login" onsubmit="event.preventDefault(); signIn();">
  <label for="email">Email</label><input id="email" type="email" placeholder="you@example.com">
  <label for="password">Password</label><input id="password" type="password">
  <label><input id="remember" type="checkbox"> Remember me</label>
  <button type="submit">Sign in</button>
</form>
<p>New here? <a href="/join">Create an account</a></p>
<p id="greeting" hidden></p>
<span aria-hidden="true">decoration</span>
<div style="height: 3000px"></div>
<button id="far" type="button">Far away</button>
<script>
  function signIn() {
    const g = document.getElementById('greeting');
    g.textContent = 'Welcome, ' + document.getElementById('email').value;
    g.hidden = false;
  }
</script></body></html>"#;

const WAIT: Duration = Duration::from_secs(5);

#[tokio::test]
async fn a_snapshot_numbers_what_a_user_sees_and_actions_by_ref_reach_it() {
    let base = serve(PAGE).await;
    let browser = Browser::launch().await.expect("Chromium starts");
    let tab = browser
        .open_tab(Viewport::default(), common::policy(&base))
        .await
        .unwrap();
    tab.open(&base, WAIT).await.unwrap();

    let snapshot = tab.snapshot().await.unwrap();
    assert_eq!(
        snapshot.lines,
        [
            "[1] heading \"Sign in\"",
            "[2] label \"Email\"",
            "[3] textbox \"Email\" value=\"\"",
            "[4] label \"Password\"",
            "[5] textbox \"Password\" secret value=\"\"",
            "[6] label \"Remember me\"",
            "[7] checkbox \"Remember me\" unchecked",
            "[8] button \"Sign in\"",
            "[9] text \"New here?\"",
            "[10] link \"Create an account\"",
            "[11] button \"Far away\" (off-screen: scroll to see it)",
        ],
        "{}",
        snapshot.text()
    );
    assert_eq!(snapshot.more, 0);

    tab.click_ref(7).await.unwrap();
    tab.type_ref(3, "ada@example.com").await.unwrap();
    tab.type_ref(5, "hunter2").await.unwrap();
    let snapshot = tab.snapshot().await.unwrap().text();
    assert!(
        snapshot.contains("[3] textbox \"Email\" value=\"ada@example.com\""),
        "{snapshot}"
    );
    assert!(snapshot.contains("[7] checkbox \"Remember me\" checked"));
    // A password reaches the model as its length only.
    assert!(snapshot.contains("[5] textbox \"Password\" secret value=\"(7 characters, hidden)\""));
    assert!(!snapshot.contains("hunter2"));

    // Enter in the focused field submits the form, as it does for a user.
    tab.press("enter").await.unwrap();
    assert_eq!(
        tab.text("#greeting", WAIT).await.unwrap(),
        "Welcome, ada@example.com"
    );
    let snapshot = tab.snapshot().await.unwrap();
    assert!(snapshot
        .lines
        .contains(&"[11] text \"Welcome, ada@example.com\"".to_string()));

    // A ref the snapshot does not have, and a key that is not one, say so.
    let error = tab.click_ref(99).await.unwrap_err();
    assert!(
        matches!(error, StepError::UnknownRef { reference: 99 }),
        "{error}"
    );
    assert!(error.to_string().contains("ref 99"));
    let error = tab.press("Hyper").await.unwrap_err();
    assert!(matches!(error, StepError::UnknownKey { .. }), "{error}");

    // Scrolling brings the far button on screen and back off.
    let far = |text: String| {
        text.lines()
            .find(|l| l.contains("Far away"))
            .unwrap()
            .to_string()
    };
    for _ in 0..5 {
        tab.scroll(ScrollDirection::Down).await.unwrap();
    }
    let line = far(tab.snapshot().await.unwrap().text());
    assert!(!line.contains("off-screen"), "{line}");
    for _ in 0..5 {
        tab.scroll(ScrollDirection::Up).await.unwrap();
    }
    let line = far(tab.snapshot().await.unwrap().text());
    assert!(line.contains("off-screen"), "{line}");

    tab.close().await;
    browser.close().await;
}
