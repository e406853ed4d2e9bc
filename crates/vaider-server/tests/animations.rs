//! Any recording, end to end: animated GIF, APNG and WebP written by the test go through MCP
//! and REST to the fake Gemini, which must receive their frames labelled with the times their
//! delays put them at (read from the request the fake was sent); an image tool sees the first
//! frame and names the video tool; a file with sound and no picture is refused before any
//! request leaves.

mod common;

use std::path::PathBuf;
use std::process::Command;

use base64::Engine as _;
use common::{call, text_of, TestServer};
use serde_json::{json, Value};
use vaider_test_support::animations::{apng, gif, screen, wav, webp, Shown};

const WHITE: [u8; 3] = [255, 255, 255];

/// A page that is still for 0.8 s (two equal frames), a panel for 430 ms, another for a
/// frame whose delay says 0 (shown 100 ms, as browsers do), then the page again for a second.
fn recording() -> Vec<Shown> {
    let (w, h) = (320, 180);
    vec![
        (screen(w, h, WHITE, None), 400),
        (screen(w, h, WHITE, None), 400),
        (screen(w, h, WHITE, Some((20, 20, 60))), 430),
        (screen(w, h, WHITE, Some((200, 90, 60))), 0),
        (screen(w, h, [230, 240, 255], None), 1000),
    ]
}

/// When each frame that differs from the one before starts, from the delays alone (a delay
/// of 10 ms or less is shown for 100 ms), as the model must be told: `mm:ss.s(s)`.
fn expected_labels(frames: &[Shown]) -> Vec<String> {
    let mut at_ms = 0;
    let mut labels = Vec::new();
    for (i, (image, delay)) in frames.iter().enumerate() {
        if i == 0 || frames[i - 1].0 != *image {
            let (seconds, hundredths) = (at_ms / 1000, at_ms % 1000 / 10);
            labels.push(match hundredths % 10 {
                0 => format!("Frame at 00:{seconds:02}.{}:", hundredths / 10),
                _ => format!("Frame at 00:{seconds:02}.{hundredths:02}:"),
            });
        }
        at_ms += if *delay <= 10 { 100 } else { *delay };
    }
    labels
}

/// The labels of the frames in a generateContent request and the images after them.
fn frames_sent(request: &Value) -> Vec<(String, image::RgbImage)> {
    let parts = request["contents"][0]["parts"].as_array().unwrap();
    let mut sent = Vec::new();
    for pair in parts.windows(2) {
        let Some(label) = pair[0]["text"]
            .as_str()
            .filter(|t| t.starts_with("Frame at "))
        else {
            continue;
        };
        let data = pair[1]["inlineData"]["data"]
            .as_str()
            .expect("an image after its label");
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data)
            .unwrap();
        sent.push((
            label.to_string(),
            image::load_from_memory(&bytes).unwrap().to_rgb8(),
        ));
    }
    sent
}

fn dark(image: &image::RgbImage, x: u32, y: u32) -> bool {
    image.get_pixel(x, y).0.iter().all(|&c| c < 70)
}

#[tokio::test]
async fn gif_apng_and_webp_recordings_reach_the_model_as_frames_at_their_own_times() {
    let server = TestServer::start().await;
    let want = expected_labels(&recording());
    assert_eq!(want.len(), 4, "{want:?}");
    let files = [
        ("run.gif", gif(&recording()), "GIF", "image/gif"),
        ("run.png", apng(&recording()), "PNG", "image/png"),
        ("run.webp", webp(&recording()), "WebP", "image/webp"),
    ];
    for (i, (name, bytes, format, mime)) in files.into_iter().enumerate() {
        let path = server.write_media(name, &bytes);
        let expectations = ["a dark panel appears"];
        // MCP for two of them, REST for the third: both doors take a recording.
        let result = if i < 2 {
            let client = server.mcp().await;
            let result = call(
                &client,
                "analyze_video",
                json!({"video_source": path, "expectations": expectations, "no_cache": true}),
            )
            .await;
            assert_ne!(result.is_error, Some(true), "{name}: {}", text_of(&result));
            let text = text_of(&result);
            assert!(text.contains(&format!("animated {format}")), "{text}");
            client.cancel().await.unwrap();
            result.structured_content.unwrap()
        } else {
            let body = json!({"videoPath": path, "expectations": expectations, "noCache": true});
            let (status, result) = server.post_analyse(body).await;
            assert_eq!(status, 200, "{name}: {result}");
            result
        };
        assert_eq!(result["mediaType"], mime, "{name}");
        assert_eq!(result["framesAnalysed"], want.len(), "{name}: {result}");
        assert_eq!(result["expectations"].as_array().unwrap().len(), 1);
        let request = server.fake.generate_requests().pop().expect("a request");
        let sent = frames_sent(&request);
        let labels: Vec<&str> = sent.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(labels, want, "{name}");
        // Each frame shows what the animation showed at its time.
        let (first, panel, other, last) = (&sent[0].1, &sent[1].1, &sent[2].1, &sent[3].1);
        assert!(!dark(first, 50, 50) && !dark(first, 230, 120), "{name}");
        assert!(dark(panel, 50, 50) && !dark(panel, 230, 120), "{name}");
        assert!(!dark(other, 50, 50) && dark(other, 230, 120), "{name}");
        assert!(
            last.get_pixel(5, 5).0[0] < 245,
            "{name}: the last page is tinted"
        );
        // The model is told what it watches and on which clock.
        let prompt = request.to_string();
        assert!(prompt.contains("animation's own clock"), "{name}");
        // Nothing was uploaded: the frames went inline.
        assert!(server.fake.files().is_empty(), "{name}");
    }
}

#[tokio::test]
async fn analyze_image_of_an_animation_sees_its_first_frame_and_names_analyze_video() {
    let server = TestServer::start().await;
    let mut frames = recording();
    // The first frame already shows the panel, so the image sent can be told from the rest.
    frames[0].0 = screen(320, 180, WHITE, Some((20, 20, 60)));
    let path = server.write_media("run.webp", &webp(&frames));
    let client = server.mcp().await;
    let result = call(&client, "analyze_image", json!({"image_source": path})).await;
    assert_ne!(result.is_error, Some(true), "{}", text_of(&result));
    let text = text_of(&result);
    assert!(
        text.contains("animated WebP (5 frames, 2.3 s)") && text.contains("analyze_video"),
        "{text}"
    );
    client.cancel().await.unwrap();
    let request = server.fake.generate_requests().pop().expect("a request");
    let parts = request["contents"][0]["parts"].as_array().unwrap();
    let images: Vec<&Value> = parts.iter().filter_map(|p| p.get("inlineData")).collect();
    assert_eq!(images.len(), 1, "one still");
    // A still PNG, not the animation.
    assert_eq!(images[0]["mimeType"], "image/png");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(images[0]["data"].as_str().unwrap())
        .unwrap();
    let still = image::load_from_memory(&bytes).unwrap().to_rgb8();
    assert!(dark(&still, 50, 50) && !dark(&still, 230, 120));
}

/// A WebM with only a sound track, made by ffmpeg.
fn sound_only_webm(dir: &std::path::Path) -> PathBuf {
    let path = dir.join("voice.webm");
    let status = Command::new("ffmpeg")
        .args([
            "-v", "error", "-y", "-f", "lavfi", "-i", "sine=d=2", "-c:a", "libopus",
        ])
        .arg(&path)
        .status()
        .expect("ffmpeg (scripts/test.sh installs it)");
    assert!(status.success());
    path
}

#[tokio::test]
async fn a_file_with_sound_and_no_picture_is_refused_before_anything_is_sent() {
    let server = TestServer::start().await;
    let wav = server.write_media("tone.wav", &wav(1));
    let webm = sound_only_webm(server.media.path());
    let client = server.mcp().await;
    for (path, what) in [
        (&wav, "a WAV audio file"),
        (&webm, "a WebM file with sound only"),
    ] {
        let result = call(&client, "analyze_video", json!({"video_source": path})).await;
        assert_eq!(result.is_error, Some(true));
        let text = text_of(&result);
        assert!(
            text.contains(what) && text.contains("no picture to watch"),
            "{text}"
        );
    }
    let (status, body) = server.post_analyse(json!({"videoPath": webm})).await;
    assert_eq!(status, 400, "{body}");
    assert!(body.to_string().contains("no picture to watch"), "{body}");
    client.cancel().await.unwrap();
    // Not an upload, not a model call: no request reached the fake at all.
    assert!(
        server.fake.requests().is_empty(),
        "{:?}",
        server.fake.requests()
    );
}
