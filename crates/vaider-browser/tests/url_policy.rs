//! The URL policy inside the real headless Chromium. All traffic stays on loopback: the test
//! host names (`evil.test`, `metadata.google.internal`) are mapped by Chromium's
//! `--host-resolver-rules` to a loopback listener that counts every connection, so "refused"
//! means "that listener was never reached", and nothing is ever sent to another address.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use vaider_browser::{Browser, BrowserError, UrlPolicy, Viewport};
use vaider_test_support::loopback::{html, listen};

const WAIT: Duration = Duration::from_secs(10);
/// What the foreign listener serves: it must never show up anywhere.
const SECRET: &str = "SECRET-OF-THE-FOREIGN-HOST";

struct World {
    browser: Browser,
    base: String,
    foreign_port: u16,
    foreign_hits: Arc<AtomicUsize>,
}

/// The app on one loopback port; `evil.test` and the metadata name on another, counted.
async fn world() -> World {
    let (foreign_port, foreign_hits) = listen(|_| html(SECRET)).await;
    let (app_port, _) = listen(move |path| match path {
        "/redirect" => format!(
            "HTTP/1.1 302 Found\r\nLocation: http://evil.test:{foreign_port}/secret\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        ),
        _ => html(&format!(
            r#"<!doctype html><html><body><h1>Shop</h1>
<a id="out" href="http://evil.test:{foreign_port}/secret">out</a>
<a id="meta" href="http://metadata.google.internal:{foreign_port}/computeMetadata/v1/">meta</a>
<img src="http://evil.test:{foreign_port}/pixel.png" alt="">
</body></html>"#
        )),
    })
    .await;
    // The URLs carry the foreign port; every other name resolves to nothing, so not even a
    // DNS query leaves the machine.
    let rules = "--host-resolver-rules=MAP evil.test 127.0.0.1, MAP metadata.google.internal 127.0.0.1, MAP * ~NOTFOUND, EXCLUDE 127.0.0.1".to_string();
    let browser = Browser::launch_with_flags(None, true, &[rules])
        .await
        .expect("Chromium starts");
    World {
        browser,
        base: format!("http://127.0.0.1:{app_port}"),
        foreign_port,
        foreign_hits,
    }
}

fn refused(result: Result<(), BrowserError>, url_part: &str, rule_part: &str) {
    match result {
        Err(BrowserError::Refused(refusal)) => {
            assert!(refusal.url.contains(url_part), "{refusal}");
            assert!(refusal.rule.contains(rule_part), "{refusal}");
        }
        other => panic!("not refused: {other:?}"),
    }
}

#[tokio::test]
async fn the_browser_never_reaches_what_the_policy_refuses() {
    let w = world().await;
    let policy = UrlPolicy::new(&w.base, &[], false).unwrap();
    let tab = w
        .browser
        .open_tab(Viewport::default(), policy)
        .await
        .unwrap();

    // Local files, in every way a step could ask for them.
    refused(
        tab.open("file:///etc/passwd", WAIT).await,
        "file:///etc/passwd",
        "http",
    );
    refused(
        tab.open("view-source:file:///etc/passwd", WAIT).await,
        "view-source:",
        "http",
    );
    // A foreign host and the metadata name, asked for directly: refused before any request.
    refused(
        tab.open("http://evil.test/", WAIT).await,
        "evil.test",
        "allow-list",
    );
    refused(
        tab.open("http://metadata.google.internal/", WAIT).await,
        "metadata.google.internal",
        "metadata",
    );

    // The app's own page loads; its image from the foreign host does not.
    tab.open(&w.base, WAIT).await.unwrap();
    assert!(tab.refused_navigation().is_none());
    let blocked = tab.take_blocked();
    assert!(
        blocked
            .iter()
            .any(|b| !b.navigation && b.refusal.url.contains("pixel.png")),
        "{blocked:?}"
    );

    // A redirect from the app's origin to the foreign host: the navigation stops there.
    refused(
        tab.open(&format!("{}/redirect", w.base), WAIT).await,
        "evil.test",
        "allow-list",
    );
    let text = tab.visible_text().await.unwrap_or_default();
    assert!(!text.contains(SECRET), "{text}");
    tab.take_blocked();

    // Link clicks, to the foreign host and to the metadata name.
    for link in ["#out", "#meta"] {
        tab.open(&w.base, WAIT).await.unwrap();
        tab.take_blocked();
        tab.click(link, WAIT).await.unwrap();
        let mut refusal = None;
        for _ in 0..100 {
            refusal = tab.refused_navigation();
            if refusal.is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let refusal = refusal.unwrap_or_else(|| panic!("clicking {link} was not refused"));
        assert!(refusal.url.contains("/secret") || refusal.url.contains("computeMetadata"));
        let text = tab.visible_text().await.unwrap_or_default();
        assert!(!text.contains(SECRET), "{text}");
        tab.take_blocked();
    }
    assert_eq!(
        w.foreign_hits.load(Ordering::SeqCst),
        0,
        "the foreign listener was reached"
    );
    tab.close().await;
    w.browser.close().await;
}

#[tokio::test]
async fn a_page_shot_is_refused_for_files_metadata_and_redirects_away() {
    let w = world().await;
    let shot = |url: String| {
        let browser = &w.browser;
        async move {
            browser
                .page_screenshot(&url, Viewport::default(), false)
                .await
        }
    };
    for url in [
        "file:///etc/passwd".to_string(),
        "view-source:file:///etc/passwd".to_string(),
        format!("http://metadata.google.internal:{}/", w.foreign_port),
        format!("{}/redirect", w.base),
    ] {
        match shot(url.clone()).await {
            Err(BrowserError::Refused(refusal)) => assert!(!refusal.rule.is_empty()),
            other => panic!("{url}: {:?}", other.map(|png| png.len())),
        }
    }
    assert_eq!(
        w.foreign_hits.load(Ordering::SeqCst),
        0,
        "the foreign listener was reached"
    );
    // The app's own page is shot; its image from another host may load (a page shot's parts
    // come from anywhere the address rules allow: here a name on this machine, as the page is).
    assert!(shot(w.base.clone()).await.is_ok());
    w.browser.close().await;
}

/// Waits until the tab has refused a request to each of `paths` (or panics after a while):
/// only then does "the refused listener saw nothing" mean the requests were made and stopped.
async fn refusals_of(tab: &vaider_browser::Tab, paths: &[&str]) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for _ in 0..300 {
        seen.extend(tab.take_blocked().into_iter().map(|b| b.refusal.url));
        if paths.iter().all(|p| seen.iter().any(|u| u.contains(p))) {
            return seen;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("not every request was refused: wanted {paths:?}, refused {seen:?}");
}

#[tokio::test]
async fn popups_and_new_tabs_are_held_to_the_tabs_policy() {
    // The refused origin: the same loopback address, another port.
    let (refused_port, refused_hits) = listen(|_| html(SECRET)).await;
    let allowed_popup = Arc::new(AtomicUsize::new(0));
    let counted = allowed_popup.clone();
    let (app_port, _) = listen(move |path| match path {
        "/ok-popup" => {
            counted.fetch_add(1, Ordering::SeqCst);
            html("<p>a popup on the app's own origin</p>")
        }
        "/scripts" => html(&format!(
            r#"<!doctype html><html><body><script>
window.open('http://127.0.0.1:{refused_port}/from-script');
window.open('http://127.0.0.1:{refused_port}/noopener', '_blank', 'noopener');
const w = window.open('about:blank'); if (w) w.location = 'http://127.0.0.1:{refused_port}/later';
window.open('/ok-popup');
</script></body></html>"#
        )),
        _ => html(&format!(
            r#"<!doctype html><html><body>
<a id="blank" target="_blank" href="http://127.0.0.1:{refused_port}/from-link">new tab</a>
</body></html>"#
        )),
    })
    .await;
    let browser = Browser::launch_with_flags(None, true, &[]).await.unwrap();
    let base = format!("http://127.0.0.1:{app_port}");
    let policy = UrlPolicy::new(&base, &[], false).unwrap();
    let tab = browser.open_tab(Viewport::default(), policy).await.unwrap();
    // A link to a new tab, clicked; then a page that opens popups from its script.
    tab.open(&base, WAIT).await.unwrap();
    tab.click("#blank", WAIT).await.unwrap();
    tab.open(&format!("{base}/scripts"), WAIT).await.unwrap();

    let refused = refusals_of(&tab, &["/from-script", "/noopener", "/later", "/from-link"]).await;
    assert!(
        refused
            .iter()
            .all(|u| u.contains(&refused_port.to_string())),
        "{refused:?}"
    );
    // A popup the policy allows still opens and loads.
    for _ in 0..200 {
        if allowed_popup.load(Ordering::SeqCst) > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        allowed_popup.load(Ordering::SeqCst),
        1,
        "the allowed popup did not load"
    );
    assert_eq!(
        refused_hits.load(Ordering::SeqCst),
        0,
        "a popup reached the refused origin"
    );
    tab.close().await;
    browser.close().await;
}

#[tokio::test]
async fn cross_site_frames_in_their_own_process_are_held_to_the_tabs_policy() {
    let (refused_port, refused_hits) = listen(|_| html(SECRET)).await;
    // An allowed cross-site frame (localhost is another site than 127.0.0.1, so Chromium runs
    // it in its own process) that asks the refused origin for an image, a fetch and a frame.
    let (frame_port, frame_hits) = listen(move |_| {
        html(&format!(
            r#"<!doctype html><html><body><p>frame</p>
<img src="http://127.0.0.1:{refused_port}/frame-img" alt="">
<iframe src="http://127.0.0.1:{refused_port}/frame-frame"></iframe>
<script>fetch('http://127.0.0.1:{refused_port}/frame-fetch').catch(() => {{}});</script>
</body></html>"#
        ))
    })
    .await;
    let (app_port, _) = listen(move |_| {
        html(&format!(
            r#"<!doctype html><html><body>
<iframe src="http://localhost:{frame_port}/inner"></iframe>
<iframe src="http://localhost:{refused_port}/direct"></iframe>
</body></html>"#
        ))
    })
    .await;
    let browser = Browser::launch_with_flags(None, true, &[]).await.unwrap();
    let base = format!("http://127.0.0.1:{app_port}");
    let allowed = vec![format!("localhost:{frame_port}")];
    let policy = UrlPolicy::new(&base, &allowed, false).unwrap();
    let tab = browser.open_tab(Viewport::default(), policy).await.unwrap();
    tab.open(&base, WAIT).await.unwrap();

    refusals_of(
        &tab,
        &["/direct", "/frame-img", "/frame-frame", "/frame-fetch"],
    )
    .await;
    assert!(
        frame_hits.load(Ordering::SeqCst) >= 1,
        "the allowed frame did not load"
    );
    assert_eq!(
        refused_hits.load(Ordering::SeqCst),
        0,
        "a frame reached the refused origin"
    );
    tab.close().await;
    browser.close().await;
}

#[tokio::test]
async fn an_allow_listed_name_is_judged_by_the_address_it_resolves_to() {
    let (foreign_port, foreign_hits) = listen(|_| html(SECRET)).await;
    let (app_port, _) = listen(move |_| {
        html(&format!(
            r#"<!doctype html><html><body><h1>Shop</h1>
<img src="http://sneaky.test:{foreign_port}/pixel.png" alt=""></body></html>"#
        ))
    })
    .await;
    // Chromium reaches `sneaky.test` at the counting listener on loopback.
    let rules =
        "--host-resolver-rules=MAP sneaky.test 127.0.0.1, MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"
            .to_string();
    let browser = Browser::launch_with_flags(None, true, &[rules])
        .await
        .unwrap();
    let base = format!("http://127.0.0.1:{app_port}");
    let allowed = vec![format!("sneaky.test:{foreign_port}")];
    let outside = format!("http://sneaky.test:{foreign_port}/secret");

    // The name stands for the cloud metadata address (as a hostile DNS answer would have it):
    // allow-listed by name, refused by address, in the step and inside the page.
    let metadata = vaider_browser::url_policy::HostRules::parse("MAP sneaky.test 169.254.169.254");
    let policy = UrlPolicy::new(&base, &allowed, false)
        .unwrap()
        .with_host_rules(metadata);
    let tab = browser.open_tab(Viewport::default(), policy).await.unwrap();
    refused(
        tab.open(&outside, WAIT).await,
        "sneaky.test",
        "169.254.169.254",
    );
    tab.open(&base, WAIT).await.unwrap();
    refusals_of(&tab, &["pixel.png"]).await;
    assert_eq!(
        foreign_hits.load(Ordering::SeqCst),
        0,
        "the refused address was reached"
    );
    tab.close().await;

    // The same name, resolved as the browser resolves it (loopback, like the base): it loads.
    let policy = UrlPolicy::new(&base, &allowed, false).unwrap();
    let tab = browser.open_tab(Viewport::default(), policy).await.unwrap();
    tab.open(&outside, WAIT).await.unwrap();
    assert!(tab.visible_text().await.unwrap().contains(SECRET));
    assert!(foreign_hits.load(Ordering::SeqCst) >= 1);
    tab.close().await;
    browser.close().await;
}
