//! Listing a provider's models against the fake Gemini: every page is followed, the page cap,
//! byte cap and timeout hold, and the choices offered after a 404 fall back to the table of
//! retirements when the list cannot be read.

use std::time::Duration;

use fake_gemini::FakeGemini;
use vaider_core::config::{Config, ProviderConfig};
use vaider_core::models::{current_choices, list_models, ListLimits};
use vaider_core::secrets::ApiKey;

fn gemini_at(base_url: &str) -> ProviderConfig {
    let mut config = Config::default();
    config.gemini.base_url = base_url.to_string();
    config.provider("gemini").unwrap()
}

fn list_requests(fake: &FakeGemini) -> usize {
    fake.requests()
        .iter()
        .filter(|r| r.path == "/v1beta/models")
        .count()
}

#[tokio::test]
async fn every_page_is_followed_within_the_page_cap() {
    let fake = FakeGemini::start().await;
    fake.set_models_page_cap(1);
    let http = reqwest::Client::new();
    let key = ApiKey::new(FakeGemini::API_KEY);
    let provider = gemini_at(&fake.base_url());
    let models = list_models(&http, &provider, Some(&key), ListLimits::default())
        .await
        .unwrap();
    let ids: Vec<&str> = models.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, fake_gemini::served_models());
    assert_eq!(list_requests(&fake), 5);
    // The key went in the header, never in the query.
    assert!(fake
        .requests()
        .iter()
        .all(|r| !r.query.as_deref().unwrap_or("").contains("key=")));

    // At most two pages: the first two models, and no third request.
    let limits = ListLimits {
        max_pages: 2,
        ..ListLimits::default()
    };
    let models = list_models(&http, &provider, Some(&key), limits)
        .await
        .unwrap();
    assert_eq!(models.len(), 2);
    assert_eq!(list_requests(&fake), 7);
}

#[tokio::test]
async fn a_page_over_the_byte_cap_or_a_slow_answer_is_an_error_not_a_wait() {
    let fake = FakeGemini::start().await;
    let http = reqwest::Client::new();
    let key = ApiKey::new(FakeGemini::API_KEY);
    let provider = gemini_at(&fake.base_url());
    let tiny = ListLimits {
        max_page_bytes: 100,
        ..ListLimits::default()
    };
    let err = list_models(&http, &provider, Some(&key), tiny)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("larger than 100 bytes"), "{err}");

    // A listener that accepts and never answers: the timeout ends it.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let provider = gemini_at(&format!("http://{}", silent.local_addr().unwrap()));
    let quick = ListLimits {
        timeout: Duration::from_millis(300),
        ..ListLimits::default()
    };
    let err = list_models(&http, &provider, Some(&key), quick)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("did not list its models"), "{err}");
    drop(silent);
}

#[tokio::test]
async fn choices_come_from_the_list_else_from_the_table() {
    let fake = FakeGemini::start().await;
    let http = reqwest::Client::new();
    let key = ApiKey::new(FakeGemini::API_KEY);
    let listed = current_choices(
        &http,
        &gemini_at(&fake.base_url()),
        Some(&key),
        "gemini-2.5-flash",
        ListLimits::on_error_path(),
    )
    .await;
    assert_eq!(listed, fake_gemini::served_models());

    // Nothing listens on port 9: the table's replacements.
    let fallback = current_choices(
        &http,
        &gemini_at("http://127.0.0.1:9"),
        Some(&key),
        "gemini-2.5-flash",
        ListLimits::on_error_path(),
    )
    .await;
    assert_eq!(fallback, ["gemini-3.5-flash-lite", "gemini-3.8-flash"]);
}
