//! Helpers for the fake-gemini protocol tests: real HTTP on loopback with reqwest.

#![allow(dead_code)]

use base64::Engine;
use fake_gemini::FakeGemini;
use reqwest::{Client, Response};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

pub const KEY: &str = FakeGemini::API_KEY;
pub const KIB256: usize = 256 * 1024;

/// Deterministic test bytes.
pub fn data(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 31 % 251) as u8).collect()
}

pub fn sha_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// What Google puts in `sha256Hash`: base64 of the lower-case hex digest.
pub fn google_sha256_hash(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(sha_hex(bytes))
}

pub fn header(resp: &Response, name: &str) -> Option<String> {
    resp.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

pub async fn start_upload(
    fake: &FakeGemini,
    client: &Client,
    size: u64,
    mime: &str,
    display_name: &str,
) -> Response {
    client
        .post(format!("{}/upload/v1beta/files", fake.base_url()))
        .header("x-goog-api-key", KEY)
        .header("X-Goog-Upload-Protocol", "resumable")
        .header("X-Goog-Upload-Command", "start")
        .header("X-Goog-Upload-Header-Content-Length", size.to_string())
        .header("X-Goog-Upload-Header-Content-Type", mime)
        .header("Content-Type", "application/json")
        .body(json!({"file": {"display_name": display_name}}).to_string())
        .send()
        .await
        .expect("start request")
}

/// Start an upload and return its session URL.
pub async fn session(fake: &FakeGemini, client: &Client, size: u64, mime: &str) -> String {
    let resp = start_upload(fake, client, size, mime, "test").await;
    assert_eq!(resp.status(), 200);
    header(&resp, "x-goog-upload-url").expect("upload url")
}

pub async fn chunk(
    client: &Client,
    url: &str,
    offset: u64,
    command: &str,
    bytes: Vec<u8>,
) -> Response {
    client
        .post(url)
        .header("X-Goog-Upload-Offset", offset.to_string())
        .header("X-Goog-Upload-Command", command)
        .body(bytes)
        .send()
        .await
        .expect("chunk request")
}

pub async fn query(client: &Client, url: &str) -> Response {
    client
        .post(url)
        .header("X-Goog-Upload-Command", "query")
        .send()
        .await
        .expect("query request")
}

/// Upload `bytes` in one request and return the `File` object.
pub async fn upload(fake: &FakeGemini, client: &Client, bytes: &[u8], mime: &str) -> Value {
    let url = session(fake, client, bytes.len() as u64, mime).await;
    let resp = chunk(client, &url, 0, "upload, finalize", bytes.to_vec()).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(
        header(&resp, "x-goog-upload-status").as_deref(),
        Some("final")
    );
    resp.json::<Value>().await.expect("json")["file"].clone()
}

pub async fn get_file(fake: &FakeGemini, client: &Client, name: &str) -> Response {
    client
        .get(format!("{}/v1beta/{name}", fake.base_url()))
        .header("x-goog-api-key", KEY)
        .send()
        .await
        .expect("get file")
}

/// Poll until the file leaves PROCESSING (bounded).
pub async fn wait_processed(fake: &FakeGemini, client: &Client, name: &str) -> Value {
    for _ in 0..50 {
        let f: Value = get_file(fake, client, name)
            .await
            .json()
            .await
            .expect("json");
        if f["state"] != "PROCESSING" {
            return f;
        }
    }
    panic!("{name} stayed PROCESSING");
}

/// Upload and wait for ACTIVE.
pub async fn active_file(fake: &FakeGemini, client: &Client, bytes: &[u8], mime: &str) -> Value {
    let f = upload(fake, client, bytes, mime).await;
    let f = wait_processed(fake, client, f["name"].as_str().expect("name")).await;
    assert_eq!(f["state"], "ACTIVE");
    f
}

pub async fn generate(fake: &FakeGemini, client: &Client, model: &str, body: &Value) -> Response {
    client
        .post(format!(
            "{}/v1beta/models/{model}:generateContent",
            fake.base_url()
        ))
        .header("x-goog-api-key", KEY)
        .json(body)
        .send()
        .await
        .expect("generate")
}

pub fn file_part(file: &Value) -> Value {
    json!({"fileData": {"fileUri": file["uri"], "mimeType": file["mimeType"]}})
}

/// The concatenated non-thought text of the first candidate.
pub fn answer_text(resp: &Value) -> String {
    resp["candidates"][0]["content"]["parts"]
        .as_array()
        .map(|parts| {
            parts
                .iter()
                .filter(|p| p["thought"] != true)
                .filter_map(|p| p["text"].as_str())
                .collect()
        })
        .unwrap_or_default()
}

/// Assert a Google error body and return it.
pub async fn expect_error(resp: Response, code: u16, status: &str) -> Value {
    assert_eq!(resp.status().as_u16(), code);
    assert!(resp.headers().get("retry-after").is_none());
    let body: Value = resp.json().await.expect("error json");
    assert_eq!(body["error"]["code"], code, "{body}");
    assert_eq!(body["error"]["status"], status, "{body}");
    assert!(body["error"]["message"]
        .as_str()
        .is_some_and(|m| !m.is_empty()));
    body
}

/// The shared media directory (MEDIA_DIR, else <repo>/../shared/media), when present.
pub fn media_dir() -> Option<std::path::PathBuf> {
    let dir = std::env::var_os("MEDIA_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/media")
        });
    dir.is_dir().then_some(dir)
}
