//! How one call is kept, whichever way it ends: a `data:` source is stored as a short label
//! and a saved file (never whole, never over the size limit), a call whose client goes away
//! does not stay `running`, and a video sent whole reports the frames Gemini samples.

mod common;

use std::time::Duration;

use base64::Engine as _;
use common::*;
use serde_json::{json, Value};
use vaider_core::history::Status;

fn data_url(bytes: &[u8]) -> String {
    format!(
        "data:image/png;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

#[tokio::test]
async fn a_data_source_is_kept_as_a_label_and_a_saved_file() {
    let server = TestServer::start_with(|c| c.download_limit_mb = 1).await;
    let png = std::fs::read(server.media_path("login.png")).unwrap();
    let encoded = base64::engine::general_purpose::STANDARD.encode(&png);
    let client = server.mcp().await;

    let result = call(
        &client,
        "analyze_image",
        json!({"image_source": data_url(&png), "no_cache": true}),
    )
    .await;
    assert_ne!(result.is_error, Some(true), "{}", text_of(&result));
    let s = result.structured_content.unwrap();
    let id = s["interactionId"].as_str().unwrap();
    let saved = std::path::PathBuf::from(s["mediaPath"].as_str().unwrap());
    assert_eq!(std::fs::read(&saved).unwrap(), png);

    let row = server.engine.history().get(id).unwrap().unwrap();
    assert!(
        row.source.starts_with("data:image/png;base64,"),
        "{}",
        row.source
    );
    assert!(row.source.len() < 200, "{}", row.source);
    assert!(!row.source.contains(&encoded[..64]));
    assert_eq!(row.media_path.as_deref(), saved.to_str());
    let request = std::fs::read_to_string(
        std::path::Path::new(s["logDir"].as_str().unwrap()).join("request.json"),
    )
    .unwrap();
    assert!(
        !request.contains(&encoded[..64]),
        "request.json holds the data"
    );

    // Over the download limit: refused before it is decoded, and nothing is left behind.
    let downloads = server.data.path().join("downloads");
    let before = std::fs::read_dir(&downloads)
        .map(|d| d.count())
        .unwrap_or(0);
    let big = data_url(&vec![7u8; 2 * 1024 * 1024]);
    let result = call(&client, "analyze_image", json!({"image_source": big})).await;
    assert_eq!(result.is_error, Some(true));
    let text = text_of(&result);
    assert!(
        text.starts_with("INVALID_PATH") && text.contains("over the limit"),
        "{text}"
    );
    // A data: URL that decodes but is not an image: refused, and its saved file removed.
    let result = call(
        &client,
        "analyze_image",
        json!({"image_source": data_url(b"just some text, not an image at all")}),
    )
    .await;
    assert_eq!(result.is_error, Some(true));
    let after = std::fs::read_dir(&downloads)
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(before, after, "a refused call left a download behind");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_call_whose_client_goes_away_does_not_stay_running() {
    let server = TestServer::start().await;
    server.fake.set_generate_delay(Duration::from_secs(600));
    let video = server.media_path("login-flow.webm");
    let request = server
        .http()
        .post(format!("{}/v1/analyse", server.url))
        .bearer_auth(TOKEN)
        .json(&json!({"videoPath": video, "timeoutSec": 600}))
        .send();
    let waiting = tokio::spawn(request);
    let history = server.engine.history().clone();
    assert!(
        eventually(
            || history.list(1, 0).unwrap().first().map(|r| r.status) == Some(Status::Running)
        )
        .await
    );
    waiting.abort(); // the client hangs up while the model is still answering
    let history = server.engine.history().clone();
    assert!(
        eventually(|| history.list(1, 0).unwrap()[0].status == Status::Interrupted).await,
        "{:?}",
        server.engine.history().list(1, 0).unwrap()
    );
    let row = &server.engine.history().list(1, 0).unwrap()[0];
    assert!(
        row.error_message
            .as_deref()
            .unwrap_or_default()
            .contains("cancelled"),
        "{row:?}"
    );
    let log_dir = std::path::PathBuf::from(row.log_dir.clone().unwrap());
    let response: Value =
        serde_json::from_slice(&std::fs::read(log_dir.join("response.json")).unwrap()).unwrap();
    assert_eq!(response["status"], "interrupted");
}

#[tokio::test]
async fn a_whole_video_reports_the_frames_gemini_samples() {
    let server = TestServer::start().await;
    // login-flow.webm is 5.5 s long: Gemini samples it at one frame a second.
    let (status, body) = server
        .post_analyse(
            json!({"videoPath": server.media_path("login-flow.webm"), "sampling": "full"}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["framesAnalysed"], 6, "{body}");
}

/// A PNG of noise, too large to hash before sending (over 16 MiB) and to send inline to
/// Gemini (over 14 MiB), so it goes through the Files API like a large video.
fn large_png(path: &std::path::Path) {
    let (w, h) = (2600u32, 2600u32);
    let mut state = 0x2545_f491_u32;
    let pixels: Vec<u8> = (0..w * h * 3)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state as u8
        })
        .collect();
    image::RgbImage::from_raw(w, h, pixels)
        .unwrap()
        .save(path)
        .unwrap();
    assert!(std::fs::metadata(path).unwrap().len() > 16 * 1024 * 1024);
}

#[tokio::test]
async fn a_large_copy_of_answered_bytes_stops_the_model_and_is_answered_from_the_cache() {
    let server = TestServer::start().await;
    let original = server.media_path("noise.png");
    large_png(&original);
    let client = server.mcp().await;
    let first = call(&client, "analyze_image", json!({"image_source": original}))
        .await
        .structured_content
        .unwrap();
    assert_eq!(first["cached"], false);
    // The hash of a large new file is taken after its upload and may outlive the answer.
    let id = first["interactionId"].as_str().unwrap().to_string();
    let history = server.engine.history().clone();
    assert!(eventually(|| history.get(&id).unwrap().unwrap().media_sha256.is_some()).await);

    // The same bytes under another name, while the model takes long to answer: the hash taken
    // after the upload finds the first answer, the model's call is stopped and the upload
    // deleted.
    let copy = server.media_path("copy-of-noise.png");
    std::fs::copy(&original, &copy).unwrap();
    server.fake.set_generate_delay(Duration::from_secs(30));
    let started = std::time::Instant::now();
    let second = call(&client, "analyze_image", json!({"image_source": copy}))
        .await
        .structured_content
        .unwrap();
    assert_eq!(second["cached"], true, "{second}");
    assert_eq!(second["description"], first["description"]);
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(server.fake.files().len(), 2, "the copy was uploaded");
    assert!(eventually(|| server.fake.files().iter().all(|f| f.deleted)).await);
    client.cancel().await.unwrap();
}
