//! The review loop end to end with real Chromium captures of a small app served on loopback
//! and the fake Gemini as the model: new → approve → unchanged → change → pending with its
//! regions and the model's verdict → reject keeps the baseline; undo puts a replaced baseline
//! back; and noise learned from five captures of a ticking clock.

use std::path::Path;

use vaider_capture::{Target, Viewport, WebPage};
use vaider_core::person::{Decision, Proof};
use vaider_core::Door;
use vaider_visual::review::{self, Action, BaselineStatus, CaptureCheck, ChangeState, Changes};

/// The app: `/v1` a title and a button; `/v2` the title blue and the button moved; `/clock` a
/// clock that shows another time on every load, `/clock-banner` the same with a new banner.
fn app(path: &str) -> String {
    let clock = "<div id=clock style='position:absolute;left:20px;top:20px;font:20px monospace'></div><script>document.getElementById('clock').textContent=Math.random().toFixed(6)</script>";
    let body = match path {
        "/v1" => "<h1 style='color:black'>Cards</h1><button style='margin-left:10px'>Add</button>".to_string(),
        "/v2" => "<h1 style='color:blue'>Cards</h1><button style='margin-left:120px'>Add</button>".to_string(),
        "/clock" => format!("{clock}<p style='position:absolute;top:200px;left:20px'>Orders</p>"),
        _ => format!("{clock}<p style='position:absolute;top:200px;left:20px'>Orders</p><div style='position:absolute;top:240px;left:20px;width:200px;height:30px;background:#c00'></div>"),
    };
    vaider_test_support::loopback::html(&format!(
        "<!doctype html><html><body style='margin:0;background:#fff;font-family:sans-serif'>{body}</body></html>"
    ))
}

fn page(port: u16, path: &str) -> Target {
    Target::Web(WebPage {
        url: format!("http://127.0.0.1:{port}{path}"),
        viewport: Viewport {
            width: 400,
            height: 300,
        },
        full_page: false,
        ignore_selectors: Vec::new(),
        device: None,
    })
}

async fn engine_with_fake() -> (
    std::sync::Arc<vaider_core::Vaider>,
    fake_gemini::FakeGemini,
    tempfile::TempDir,
) {
    let fake = fake_gemini::FakeGemini::start().await;
    let data = tempfile::tempdir().unwrap();
    let mut config = vaider_core::Config {
        data_dir: Some(data.path().to_path_buf()),
        ..vaider_core::Config::default()
    };
    config.gemini.base_url = fake.base_url();
    config.max_calls_per_minute = 0;
    let engine = vaider_core::Vaider::open(config).unwrap();
    engine.set_api_key(
        vaider_core::secrets::ApiKey::new(fake_gemini::FakeGemini::API_KEY),
        vaider_core::secrets::KeySource::Environment("GEMINI_API_KEY".into()),
    );
    (engine, fake, data)
}

async fn capture(
    engine: Option<&vaider_core::Vaider>,
    project: &Path,
    name: &str,
    target: &Target,
    check: CaptureCheck,
) -> review::BaselineCheck {
    let data = review::capture_and_check(engine, project, name, "", target, check, Door::Cli)
        .await
        .unwrap();
    data.baseline.expect("a baseline check")
}

fn with_model(expected: &[&str]) -> CaptureCheck {
    CaptureCheck {
        expected_changes: expected.iter().map(|s| s.to_string()).collect(),
        ask_model: true,
        ..CaptureCheck::default()
    }
}

#[tokio::test]
async fn new_approve_unchanged_change_judged_then_rejected_keeps_the_baseline() {
    let (engine, fake, _data) = engine_with_fake().await;
    let (port, _) = vaider_test_support::loopback::listen(app).await;
    let project = tempfile::tempdir().unwrap();
    let project = project.path();
    let person = Decision::on_command_line();

    // New: no baseline yet, a pending change, no model call.
    let first = capture(
        Some(&engine),
        project,
        "cards",
        &page(port, "/v1"),
        with_model(&[]),
    )
    .await;
    assert_eq!(first.status, BaselineStatus::New);
    let baseline = project.join(".vaider/baselines/cards@400x300.png");
    assert_eq!(first.baseline, baseline);
    let change = first.change.unwrap();
    assert_eq!(Changes::in_project(project).pending().len(), 1);
    let approved = review::approve(project, &change.id, &person, "the first look").unwrap();
    assert_eq!(approved.action, Action::Approved);
    assert!(baseline.is_file());
    let approved_bytes = std::fs::read(&baseline).unwrap();
    assert!(project
        .join(".vaider/baselines/cards@400x300.json")
        .is_file());

    // The same screen again: unchanged, nothing pending, still no model call.
    let again = capture(
        Some(&engine),
        project,
        "cards",
        &page(port, "/v1"),
        with_model(&[]),
    )
    .await;
    assert_eq!(again.status, BaselineStatus::Unchanged, "{again:?}");
    assert!(Changes::in_project(project).pending().is_empty());
    assert!(fake.generate_requests().is_empty());

    // A change: pending, with its regions, the diff pictures and one model call's verdicts.
    let expected = ["the title is blue"];
    let changed = capture(
        Some(&engine),
        project,
        "cards",
        &page(port, "/v2"),
        with_model(&expected),
    )
    .await;
    assert_eq!(changed.status, BaselineStatus::Changed);
    let change = changed.change.unwrap();
    assert!(!change.regions.is_empty());
    assert!(change.changed_pixels > 0);
    assert!(change.diff_image.as_ref().unwrap().is_file());
    assert!(change.annotated.as_ref().unwrap().is_file());
    assert_eq!(change.verdicts.len(), change.regions.len());
    // The fake judges as its rule says: one region per declared change is intentional.
    assert_eq!(change.verdicts[0].verdict, "intentional");
    assert!(
        change.verdicts[0].reason.contains("the title is blue"),
        "{:?}",
        change.verdicts
    );
    assert!(
        change.verdicts[1..]
            .iter()
            .all(|v| v.verdict == "regression"),
        "{:?}",
        change.verdicts
    );
    assert_eq!(change.expected_changes, expected);
    assert_eq!(fake.generate_requests().len(), 1);
    let request = fake.generate_requests()[0].to_string();
    assert!(
        request.contains("the title is blue"),
        "the expected change reaches the model"
    );
    assert!(change.interaction_id.is_some());

    // The same pair again: the same change, answered from the cache.
    let cached = capture(
        Some(&engine),
        project,
        "cards",
        &page(port, "/v2"),
        with_model(&expected),
    )
    .await;
    assert_eq!(cached.change.as_ref().unwrap().id, change.id);
    assert_eq!(
        fake.generate_requests().len(),
        1,
        "the same pair is judged once"
    );
    assert_eq!(Changes::in_project(project).pending().len(), 1);

    // Reject: the baseline stays, the change is closed, the decision logged and in the history.
    let rejected =
        review::reject(project, &change.id, &person, "the button must not move").unwrap();
    review::decide::record_in_history(&engine, project, &rejected, Door::Cli)
        .await
        .unwrap();
    assert_eq!(std::fs::read(&baseline).unwrap(), approved_bytes);
    assert_eq!(
        Changes::in_project(project).get(&change.id).unwrap().state,
        ChangeState::Rejected
    );
    assert!(Changes::in_project(project).pending().is_empty());
    let log = review::decisions(project);
    assert_eq!(
        log.iter().map(|r| r.action).collect::<Vec<_>>(),
        [Action::Approved, Action::Rejected]
    );
    assert_eq!(log[1].reason, "the button must not move");
    assert_eq!(log[1].proof, Proof::CommandLine);
    let rows = engine.history().list(50, 0).unwrap();
    assert!(
        rows.iter().any(|r| r.tool == "review_decision"),
        "the decision is in the history"
    );

    // Undo the rejection, approve instead, then undo that: the old baseline is back.
    review::undo(project, &person, "changed my mind").unwrap();
    assert_eq!(Changes::in_project(project).pending().len(), 1);
    review::approve(project, &change.id, &person, "the new layout").unwrap();
    assert_ne!(std::fs::read(&baseline).unwrap(), approved_bytes);
    let undone = review::undo(project, &person, "not yet").unwrap();
    assert_eq!(undone.action, Action::Undone);
    assert_eq!(std::fs::read(&baseline).unwrap(), approved_bytes);
    // Twice approving the same change is refused with what to do.
    review::approve(project, &change.id, &person, "").unwrap();
    let err = review::approve(project, &change.id, &person, "").unwrap_err();
    assert!(err.to_string().contains("undo"), "{err}");
}

#[tokio::test]
async fn a_ticking_clock_is_learned_as_noise_and_a_real_change_is_still_found() {
    let (port, _) = vaider_test_support::loopback::listen(app).await;
    let project = tempfile::tempdir().unwrap();
    let project = project.path();
    let learn = CaptureCheck {
        learn_noise: 5,
        ..CaptureCheck::default()
    };
    let first = capture(None, project, "orders", &page(port, "/clock"), learn).await;
    assert_eq!(first.status, BaselineStatus::New);
    let change = first.change.unwrap();
    assert_eq!(
        change.proposed_ignore.len(),
        1,
        "{:?}",
        change.proposed_ignore
    );
    let clock = &change.proposed_ignore[0];
    // The clock's digits (its constant "0." stays out), nothing of the page below it.
    assert!(
        clock.x >= 16
            && clock.y >= 16
            && clock.x + clock.width < 200
            && clock.y + clock.height < 60,
        "{clock:?}"
    );
    assert!(clock.reason.contains("5 captures"), "{}", clock.reason);
    review::approve(project, &change.id, &Decision::on_command_line(), "").unwrap();
    let meta = review::Baselines::in_project(project)
        .meta(&review::BaselineKey::new("orders", "400x300").unwrap())
        .unwrap();
    assert_eq!(
        meta.ignore_regions, change.proposed_ignore,
        "kept with the baseline"
    );

    // The clock shows another time: unchanged. A banner appears: changed, outside the clock.
    let again = capture(
        None,
        project,
        "orders",
        &page(port, "/clock"),
        CaptureCheck::default(),
    )
    .await;
    assert_eq!(again.status, BaselineStatus::Unchanged, "{again:?}");
    let banner = capture(
        None,
        project,
        "orders",
        &page(port, "/clock-banner"),
        CaptureCheck::default(),
    )
    .await;
    assert_eq!(banner.status, BaselineStatus::Changed);
    let regions = banner.change.unwrap().regions;
    assert!(regions.iter().all(|r| r.y >= 200), "{regions:?}");
}

/// A page that is green only when shown as a phone: an iPhone's user agent, touch, a device
/// pixel ratio of 3 and a 390 CSS pixels wide viewport; red otherwise.
fn phone_check(_: &str) -> String {
    vaider_test_support::loopback::html(
        "<!doctype html><html><head><meta name=viewport content='width=device-width'></head><body style='margin:0'><div id=box style='width:100vw;height:100vh;background:red'></div><script>
const phone = navigator.userAgent.includes('iPhone') && navigator.maxTouchPoints > 0 && devicePixelRatio === 3 && innerWidth === 390;
document.getElementById('box').style.background = phone ? 'rgb(0,160,0)' : 'red';
</script></body></html>",
    )
}

#[tokio::test]
async fn a_page_named_with_a_device_is_captured_as_that_device_and_keyed_by_its_name() {
    let (port, _) = vaider_test_support::loopback::listen(phone_check).await;
    let project = tempfile::tempdir().unwrap();
    let project = project.path();
    std::fs::create_dir_all(project.join(".vaider")).unwrap();
    std::fs::write(
        project.join(".vaider/check.toml"),
        format!("[[page]]\nname = \"home\"\nurl = \"http://127.0.0.1:{port}/\"\ndevice = \"iPhone 13\"\n"),
    )
    .unwrap();
    let file = review::check_file::read(project).unwrap();
    let target = file.page[0].target(project).await.unwrap();
    let checked = capture(None, project, "home", &target, CaptureCheck::default()).await;
    assert_eq!(checked.status, BaselineStatus::New);
    assert_eq!(
        checked.baseline,
        project.join(".vaider/baselines/home@iPhone-13.png")
    );
    let actual = image::open(&checked.change.unwrap().actual)
        .unwrap()
        .into_rgb8();
    // The device's 390x664 viewport at its scale of 3, and the page saw a phone.
    assert_eq!(actual.dimensions(), (1170, 1992));
    assert_eq!(
        actual.get_pixel(585, 996).0,
        [0, 160, 0],
        "the page saw no iPhone"
    );

    // A name Playwright does not know is refused with the names it is close to.
    let unknown = review::check_file::CheckPage {
        device: Some("iPhone 99".into()),
        ..file.page[0].clone()
    };
    let err = unknown.target(project).await.unwrap_err().to_string();
    assert!(
        err.contains("\"iPhone 99\"") && err.contains("iPhone 1"),
        "{err}"
    );
}

#[tokio::test]
async fn noise_learned_on_an_unchanged_capture_is_still_offered() {
    let (port, _) = vaider_test_support::loopback::listen(app).await;
    let project = tempfile::tempdir().unwrap();
    let project = project.path();
    let person = Decision::on_command_line();
    // A baseline approved from one capture: it ignores nothing yet.
    let first = capture(
        None,
        project,
        "orders",
        &page(port, "/clock"),
        CaptureCheck::default(),
    )
    .await;
    review::approve(project, &first.change.unwrap().id, &person, "").unwrap();

    // Five captures: the clock is all that differs, so the page is unchanged, and its box is
    // offered as a pending change that fails nothing.
    let learn = CaptureCheck {
        learn_noise: 5,
        ..CaptureCheck::default()
    };
    let learned = capture(
        None,
        project,
        "orders",
        &page(port, "/clock"),
        learn.clone(),
    )
    .await;
    assert_eq!(learned.status, BaselineStatus::Unchanged, "{learned:?}");
    let offer = learned.change.expect("the learned noise is offered");
    assert_eq!(offer.status, BaselineStatus::Unchanged);
    assert_eq!(
        offer.proposed_ignore.len(),
        1,
        "{:?}",
        offer.proposed_ignore
    );
    let clock = &offer.proposed_ignore[0];
    assert!(clock.y < 60 && clock.x + clock.width < 200, "{clock:?}");
    assert_eq!(Changes::in_project(project).pending().len(), 1);
    review::approve(project, &offer.id, &person, "the clock ticks").unwrap();

    // Kept with the baseline: a plain capture is unchanged, and learning again offers nothing
    // the baseline already ignores. A real change elsewhere is still found.
    let plain = capture(
        None,
        project,
        "orders",
        &page(port, "/clock"),
        CaptureCheck::default(),
    )
    .await;
    assert_eq!(plain.status, BaselineStatus::Unchanged, "{plain:?}");
    assert!(plain.change.is_none());
    let again = capture(None, project, "orders", &page(port, "/clock"), learn).await;
    assert!(again.change.is_none(), "{again:?}");
    let banner = capture(
        None,
        project,
        "orders",
        &page(port, "/clock-banner"),
        CaptureCheck::default(),
    )
    .await;
    assert_eq!(banner.status, BaselineStatus::Changed);
    assert!(banner.change.unwrap().regions.iter().all(|r| r.y >= 200));
}
