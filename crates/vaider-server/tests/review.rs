//! The review loop's doors (docs/review.md): over MCP an agent lists the pending changes and
//! proposes a decision that only the user makes, asked through the client; over the UI's API
//! only a signed-in page decides, and the token alone gets 403 `PERSON_REQUIRED`.

mod common;

use std::path::PathBuf;

use common::review::{baseline, pending_change, png};
use common::{call, text_of, TestClient, TestServer};
use serde_json::{json, Value};
use vaider_visual::review::{self, Changes};

fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    (dir, root)
}

#[tokio::test]
async fn an_agent_lists_changes_and_only_the_user_approves_through_the_client() {
    let (_dir, root) = project();
    let server = TestServer::start().await;
    let change = pending_change(&root, "home").await;
    let cwd = root.display().to_string();

    // A client that cannot ask its user: refused, nothing changed.
    let cannot_ask = server.mcp_with(TestClient::default()).await;
    let listed = call(&cannot_ask, "review_pending", json!({"cwd": cwd})).await;
    assert!(
        text_of(&listed).contains(&change.id),
        "{}",
        text_of(&listed)
    );
    // The paths an agent gets are the pictures' own, by the rule the review page serves by.
    let data = listed.structured_content.clone().unwrap_or_default();
    assert_eq!(
        data["data"]["changes"][0]["actual"],
        json!(change.actual.canonicalize().unwrap()),
        "{data}"
    );
    let refused = call(
        &cannot_ask,
        "review_approve",
        json!({"id": change.id, "reason": "looks right", "cwd": cwd}),
    )
    .await;
    assert_eq!(refused.is_error, Some(true));
    let said = text_of(&refused);
    assert!(
        said.contains("#/review") && said.contains("vaider review approve"),
        "{said}"
    );
    assert!(!baseline(&root, "home").exists());
    assert_eq!(Changes::in_project(&root).pending().len(), 1);
    cannot_ask.cancel().await.unwrap();

    // The user says no in their client: refused too.
    let declines = TestClient {
        approve: Some(false),
        ..TestClient::default()
    };
    let declines = server.mcp_with(declines).await;
    let declined = call(
        &declines,
        "review_approve",
        json!({"id": change.id, "cwd": cwd}),
    )
    .await;
    assert_eq!(declined.is_error, Some(true), "{}", text_of(&declined));
    assert!(!baseline(&root, "home").exists());
    declines.cancel().await.unwrap();

    // The user says yes: approved with their answer as the proof.
    let user = TestClient {
        approve: Some(true),
        ..TestClient::default()
    };
    let asked = user.asked.clone();
    let client = server.mcp_with(user).await;
    let approved = call(
        &client,
        "review_approve",
        json!({"id": change.id, "reason": "looks right", "cwd": cwd}),
    )
    .await;
    assert_ne!(approved.is_error, Some(true), "{}", text_of(&approved));
    let question = asked.lock().unwrap().join("\n");
    assert!(
        question.contains(&change.id) && question.contains("home@40x30"),
        "{question}"
    );
    assert_eq!(
        std::fs::read(baseline(&root, "home")).unwrap(),
        std::fs::read(&change.actual).unwrap()
    );
    let log = review::decisions(&root);
    assert_eq!(log.len(), 1);
    let proof = serde_json::to_value(&log[0].proof).unwrap();
    assert_eq!(proof["kind"], "askedThroughClient", "{proof}");
    assert_eq!(proof["client"], "vaider-tests");
    assert!(Changes::in_project(&root).pending().is_empty());
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn the_token_alone_decides_nothing_and_the_signed_in_page_does() {
    let (_dir, root) = project();
    let server = TestServer::start().await;
    let first = pending_change(&root, "home").await;
    let second = pending_change(&root, "cart").await;
    let project = root.display().to_string();
    let url = |path: &str| format!("{}/api/review{path}", server.url);

    let by_token = server
        .http()
        .post(url("/approve"))
        .bearer_auth(common::TOKEN)
        .json(&json!({"project": project, "id": first.id}))
        .send()
        .await
        .unwrap();
    assert_eq!(by_token.status(), 403);
    let refused: Value = by_token.json().await.unwrap();
    assert_eq!(refused["error"]["code"], "PERSON_REQUIRED", "{refused}");
    assert!(!baseline(&root, "home").exists());

    let session = common::sign_in(&server).await;
    let page = |request: reqwest::RequestBuilder| request.header("x-vaider-session", &session);
    let listed: Value = page(server.http().get(url("")).query(&[("project", &project)]))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let changes = listed["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 2, "{listed}");
    // The picture is served through its signed link, with no header at all.
    let actual = changes[0]["pictures"]["actual"].as_str().unwrap();
    let picture = server
        .http()
        .get(format!("{}{actual}", server.url))
        .send()
        .await
        .unwrap();
    assert_eq!(picture.status(), 200);
    assert_eq!(picture.headers()["content-type"], "image/png");
    // An altered link is refused.
    let altered = actual.replace("which=actual", "which=baseline");
    let refused = server
        .http()
        .get(format!("{}{altered}", server.url))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 403);

    let approved = page(server.http().post(url("/approve")))
        .json(&json!({"project": project, "ids": [first.id, second.id], "reason": "both fine"}))
        .send()
        .await
        .unwrap();
    assert_eq!(approved.status(), 200);
    assert!(baseline(&root, "home").exists() && baseline(&root, "cart").exists());
    let log = review::decisions(&root);
    assert_eq!(log.len(), 2);
    assert_eq!(
        serde_json::to_value(&log[0].proof).unwrap()["kind"],
        "signedInUi"
    );

    let undone = page(server.http().post(url("/undo")))
        .json(&json!({"project": project}))
        .send()
        .await
        .unwrap();
    assert_eq!(undone.status(), 200);
    assert!(
        !baseline(&root, "cart").exists(),
        "the last approval is undone"
    );
    assert_eq!(Changes::in_project(&root).pending().len(), 1);
}

#[tokio::test]
async fn a_picture_path_pointing_outside_the_change_is_not_served() {
    let (_dir, root) = project();
    let server = TestServer::start().await;
    let change = pending_change(&root, "home").await;
    // Someone who can write in the project points the change at another file.
    let outside = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(outside.path(), png([1, 2, 3])).unwrap();
    let mut tampered = change.clone();
    tampered.actual = outside.path().to_path_buf();
    Changes::in_project(&root).save(&tampered).unwrap();

    let session = common::sign_in(&server).await;
    let listed: Value = server
        .http()
        .get(format!("{}/api/review", server.url))
        .query(&[("project", root.display().to_string())])
        .header("x-vaider-session", &session)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(listed["changes"][0]["id"], change.id.as_str(), "{listed}");
    assert_eq!(
        listed["changes"][0]["pictures"]["actual"],
        Value::Null,
        "{listed}"
    );
    // Even a link signed for it is refused.
    let path = format!(
        "/api/review/picture?project={}&id={}&which=actual",
        root.display().to_string().replace('/', "%2F"),
        change.id
    );
    let signed = vaider_server::signed_url::sign(&path, std::time::Duration::from_secs(60));
    let refused = server
        .http()
        .get(format!("{}{signed}", server.url))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 404);
}
