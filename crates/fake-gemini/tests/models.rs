//! The models the fake serves: today's only, listed page by page; a shut-down model answers
//! 404 NOT_FOUND with Google's own message on every generating route.

mod common;

use common::*;
use fake_gemini::FakeGemini;
use reqwest::Client;
use serde_json::{json, Value};

const GONE: [&str; 3] = ["gemini-2.5-flash", "gemini-2.5-pro", "gemini-2.0-flash"];

async fn list_page(fake: &FakeGemini, client: &Client, query: &[(&str, &str)]) -> Value {
    let r = client
        .get(format!("{}/v1beta/models", fake.base_url()))
        .header("x-goog-api-key", KEY)
        .query(query)
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
    r.json().await.expect("json")
}

#[tokio::test]
async fn the_listing_is_paged_and_holds_todays_models_only() {
    let fake = FakeGemini::start().await;
    let client = Client::new();
    let mut names = Vec::new();
    let mut token = String::new();
    let mut pages = 0;
    loop {
        let mut query = vec![("pageSize", "2")];
        if !token.is_empty() {
            query.push(("pageToken", token.as_str()));
        }
        let page = list_page(&fake, &client, &query).await;
        pages += 1;
        let models = page["models"].as_array().expect("models");
        assert!(models.len() <= 2);
        for m in models {
            let name = m["name"].as_str().expect("name");
            assert!(name.starts_with("models/"), "{name}");
            assert_eq!(m["baseModelId"], name.trim_start_matches("models/"));
            assert!(m["inputTokenLimit"].as_u64().unwrap() > 0);
            assert!(m["outputTokenLimit"].as_u64().unwrap() > 0);
            let methods = m["supportedGenerationMethods"].as_array().unwrap();
            assert!(methods.iter().any(|x| x == "generateContent"));
            names.push(name.trim_start_matches("models/").to_string());
        }
        match page["nextPageToken"].as_str() {
            Some(t) => token = t.to_string(),
            None => break,
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(
        names,
        [
            "gemini-3.5-flash",
            "gemini-3.5-flash-lite",
            "gemini-3.8-flash",
            "gemini-3.1-pro-preview",
            "gemini-2.5-flash-lite"
        ]
    );
    // The page cap answers fewer than asked: the token must be followed.
    fake.set_models_page_cap(1);
    let page = list_page(&fake, &client, &[("pageSize", "100")]).await;
    assert_eq!(page["models"].as_array().unwrap().len(), 1);
    assert!(page["nextPageToken"].is_string());
    // A bad token is refused, as Google does.
    let r = client
        .get(format!("{}/v1beta/models?pageToken=zz", fake.base_url()))
        .header("x-goog-api-key", KEY)
        .send()
        .await
        .expect("send");
    expect_error(r, 400, "INVALID_ARGUMENT").await;
}

#[tokio::test]
async fn a_shut_down_model_answers_googles_404_on_every_generating_route() {
    let fake = FakeGemini::start().await;
    let client = Client::new();
    let body = json!({"contents": [{"parts": [{"text": "hi"}]}]});
    for model in GONE {
        for action in [
            "generateContent",
            "streamGenerateContent?alt=sse",
            "countTokens",
        ] {
            let r = client
                .post(format!(
                    "{}/v1beta/models/{model}:{action}",
                    fake.base_url()
                ))
                .header("x-goog-api-key", KEY)
                .json(&body)
                .send()
                .await
                .expect("send");
            let e = expect_error(r, 404, "NOT_FOUND").await;
            assert_eq!(
                e["error"]["message"],
                format!(
                    "models/{model} is not found for API version v1beta, or is not supported for \
                     generateContent. Call ListModels to see the list of available models and \
                     their supported methods."
                ),
                "{model} {action}"
            );
        }
    }
    // Today's models answer.
    for model in fake_gemini::served_models() {
        let r = generate(&fake, &client, model, &body).await;
        assert_eq!(r.status(), 200, "{model}");
    }
}
