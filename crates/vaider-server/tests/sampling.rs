//! Change-aware sampling of videos for Gemini, end to end: recordings made by ffmpeg with
//! screen changes at known times go through MCP and REST to the fake Gemini, which counts
//! tokens the way Gemini documents (frames at each clip's fps between its offsets). The
//! tests read what the fake was sent, not what Vaider says it sent.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{call, text_of, TestServer};
use serde_json::{json, Value};

/// A 640x360 VP8 WebM at 25 fps with no sound, as Playwright records, drawn by ffmpeg; with
/// `moving`, a red block also moves along that overlay expression.
fn recording(
    dir: &Path,
    name: &str,
    seconds: u32,
    filters: &[String],
    moving: Option<&str>,
) -> PathBuf {
    let path = dir.join(name);
    let source = format!("color=c=white:s=640x360:r=25:d={seconds}");
    let mut filter = vec!["drawbox=x=0:y=0:w=640:h=36:color=0x334455:t=fill".to_string()];
    filter.extend(filters.iter().cloned());
    let mut graph = format!("[0:v]{}", filter.join(","));
    if let Some(overlay) = moving {
        graph.push_str(&format!(
            "[base];color=c=red:s=80x80:r=25[block];[base][block]overlay={overlay}:shortest=1"
        ));
    }
    let status = Command::new("ffmpeg")
        .args(["-v", "error", "-y", "-f", "lavfi", "-i", &source])
        .args(["-filter_complex", &graph])
        .args([
            "-c:v",
            "libvpx",
            "-b:v",
            "1M",
            "-deadline",
            "realtime",
            "-cpu-used",
            "8",
        ])
        .arg(&path)
        .status()
        .expect("ffmpeg (scripts/test.sh installs it)");
    assert!(status.success());
    path
}

/// A panel that appears at `at` seconds (and stays, or goes at `until`).
fn panel(at: f64, until: Option<f64>, x: u32, y: u32) -> String {
    let enable = match until {
        Some(until) => format!("between(t,{at},{until})"),
        None => format!("gte(t,{at})"),
    };
    format!("drawbox=enable='{enable}':x={x}:y={y}:w=120:h=100:color=0x2060a0:t=fill")
}

/// The frame times Gemini samples from each `fileData` part of a generateContent request:
/// one every 1/fps from the start offset, up to the end offset. None for a part with no
/// clip (the whole video at one frame a second).
fn sampled_times(request: &Value) -> Vec<Option<Vec<f64>>> {
    let seconds = |v: &Value| {
        v.as_str()
            .unwrap()
            .trim_end_matches('s')
            .parse::<f64>()
            .unwrap()
    };
    request["contents"][0]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p.get("fileData").is_some())
        .map(|part| {
            let meta = part.get("videoMetadata")?;
            let (start, end) = (seconds(&meta["startOffset"]), seconds(&meta["endOffset"]));
            let fps = meta["fps"].as_f64().unwrap();
            assert!(fps > 0.0 && fps <= 24.0, "fps {fps}");
            let frames = (((end - start) * fps).ceil() as u64).max(1);
            Some((0..frames).map(|k| start + k as f64 / fps).collect())
        })
        .collect()
}

async fn analyse(server: &TestServer, video: &Path, sampling: &str) -> (Value, Value) {
    let client = server.mcp().await;
    let result = call(
        &client,
        "analyze_video",
        json!({"video_source": video, "sampling": sampling, "no_cache": true}),
    )
    .await;
    assert_ne!(result.is_error, Some(true), "{}", text_of(&result));
    client.cancel().await.unwrap();
    let sent = server
        .fake
        .generate_requests()
        .pop()
        .expect("a generateContent request");
    (result.structured_content.unwrap(), sent)
}

#[tokio::test]
async fn every_change_has_a_frame_at_or_just_after_it_and_full_sends_the_whole_video() {
    // At Gemini 2.x's 258 tokens a frame, clips and keyframes cost less than the whole video;
    // on Gemini 3 (70 a frame, the default model) the whole video often does (tests/tokens.rs).
    let server = TestServer::start_with(|c| {
        c.model = "gemini-2.5-flash-lite".into();
        // The scan gets at most half the time left: room for a debug build on a busy machine.
        c.timeout_sec = 120;
    })
    .await;
    // Steps at 3, 8 and 50 s; a panel shown for half a second at 12 s; a block moving
    // across the screen for 10 s from 20 s; a last step at 55 s.
    let filters = [
        panel(3.0, None, 20, 60),
        panel(8.0, None, 160, 60),
        panel(12.0, Some(12.49), 300, 60),
        panel(50.0, None, 440, 60),
        panel(55.0, None, 20, 200),
    ];
    // Off screen until 20 s, then 50 px a second until it stops at 30 s.
    let moving = "x='if(lt(t,20),-200,20+50*min(t-20,10))':y=220";
    let video = recording(
        server.media.path(),
        "changes.webm",
        60,
        &filters,
        Some(moving),
    );

    let (result, sent) = analyse(&server, &video, "auto").await;
    let sampling = &result["sampling"];
    assert_eq!(sampling["used"], "clips", "{result}");
    let parts = sampled_times(&sent);
    assert!(
        parts.len() <= 10,
        "Gemini takes at most 10 videos a request"
    );
    let frames: Vec<f64> = parts.into_iter().flatten().flatten().collect();
    let changes = [0.0, 3.0, 8.0, 12.0, 12.5, 20.0, 25.0, 30.0, 50.0, 55.0];
    for at in changes {
        assert!(
            frames.iter().any(|f| *f >= at - 1e-3 && *f <= at + 0.5),
            "no frame sent at or just after {at} s: {frames:?}"
        );
    }
    // Inside the animation, a frame at least every half second.
    let moving: Vec<f64> = frames
        .iter()
        .copied()
        .filter(|f| (20.0..=30.0).contains(f))
        .collect();
    assert!(
        moving.windows(2).all(|w| w[1] - w[0] <= 0.5 + 1e-6),
        "{moving:?}"
    );
    // The result lists the moments sent: the same frames.
    let moments: Vec<f64> = sampling["moments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_f64().unwrap())
        .collect();
    assert_eq!(moments.len(), frames.len());
    assert_eq!(result["framesAnalysed"], frames.len());
    // The model is told which moments it sees.
    let prompt = sent["contents"][0]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["text"].as_str())
        .collect::<String>();
    assert!(prompt.contains("did not change"), "{prompt}");

    let (full, sent) = analyse(&server, &video, "full").await;
    assert_eq!(sampled_times(&sent), vec![None], "one whole video, no clip");
    assert_eq!(full["sampling"]["used"], "full");
    assert_eq!(full["framesAnalysed"], 60);
    let (auto_in, full_in) = (
        result["usage"]["inputTokens"].as_u64().unwrap(),
        full["usage"]["inputTokens"].as_u64().unwrap(),
    );
    assert!(auto_in < full_in, "auto {auto_in} vs full {full_in}");
    // What auto says the default would have cost is what full cost, but for the note that
    // tells the model about the clips.
    let said = sampling["defaultSamplingInputTokens"].as_u64().unwrap();
    assert!(said.abs_diff(full_in) * 20 < full_in, "{said} vs {full_in}");
}

#[tokio::test]
async fn a_mostly_still_minute_costs_five_times_fewer_tokens_and_the_history_keeps_both() {
    // On Gemini 2.x, where a clip's frame and the default's cost the same (258). On Gemini 3
    // clips go at HIGH to keep text readable (tests/tokens.rs).
    let server = TestServer::start_with(|c| {
        c.model = "gemini-2.5-flash-lite".into();
        // The scan gets at most half the time left: room for a debug build on a busy machine.
        c.timeout_sec = 120;
    })
    .await;
    let filters: Vec<String> = [4.0, 11.0, 17.5, 25.0, 31.0, 38.0, 46.0, 53.5]
        .iter()
        .enumerate()
        .map(|(i, at)| {
            panel(
                *at,
                None,
                20 + (i as u32 % 4) * 150,
                60 + (i as u32 / 4) * 150,
            )
        })
        .collect();
    let video = recording(server.media.path(), "still.webm", 60, &filters, None);

    let (auto, _) = analyse(&server, &video, "auto").await;
    let (full, _) = analyse(&server, &video, "full").await;
    let (auto_in, full_in) = (
        auto["usage"]["inputTokens"].as_u64().unwrap(),
        full["usage"]["inputTokens"].as_u64().unwrap(),
    );
    assert!(
        auto_in * 5 <= full_in,
        "auto {auto_in} tokens vs full {full_in}"
    );
    assert_eq!(auto["sampling"]["moments"].as_array().unwrap().len(), 9);

    // The history keeps, per call, the tokens used and the default's, and sums them.
    let id = auto["interactionId"].as_str().unwrap().to_string();
    let row = server.engine.history().get(&id).unwrap().unwrap();
    assert_eq!(row.input_tokens, auto_in);
    assert_eq!(
        row.default_sampling_input_tokens,
        auto["sampling"]["defaultSamplingInputTokens"].as_u64()
    );
    let totals = server.engine.history().totals().unwrap();
    assert_eq!(totals.input_tokens, auto_in + full_in);
    assert_eq!(
        totals.default_sampling_input_tokens,
        auto["sampling"]["defaultSamplingInputTokens"]
            .as_u64()
            .unwrap()
            + full_in
    );
}

#[tokio::test]
async fn more_changes_than_clips_in_one_request_go_as_keyframes() {
    // At Gemini 2.x's 258 tokens a frame, clips and keyframes cost less than the whole video;
    // on Gemini 3 (70 a frame, the default model) the whole video often does (tests/tokens.rs).
    let server = TestServer::start_with(|c| {
        c.model = "gemini-2.5-flash-lite".into();
        // The scan gets at most half the time left: room for a debug build on a busy machine.
        c.timeout_sec = 120;
    })
    .await;
    // 14 changes 4 s apart: 15 still stretches, more than Gemini's 10 videos a request.
    let filters: Vec<String> = (1..=14)
        .map(|i| panel(i as f64 * 4.0, None, 10 + (i % 5) * 125, 50 + (i / 5) * 105))
        .collect();
    let video = recording(server.media.path(), "many.webm", 60, &filters, None);
    let (result, sent) = analyse(&server, &video, "auto").await;
    assert_eq!(result["sampling"]["used"], "keyframes", "{result}");
    let parts = sent["contents"][0]["parts"].as_array().unwrap();
    assert!(
        parts.iter().all(|p| p.get("fileData").is_none()),
        "no video part"
    );
    let labels: Vec<&str> = parts
        .iter()
        .filter_map(|p| p["text"].as_str())
        .filter(|t| t.starts_with("Frame at "))
        .collect();
    let images = parts
        .iter()
        .filter(|p| p.get("inlineData").is_some())
        .count();
    assert_eq!(images, labels.len());
    assert_eq!(
        images, 16,
        "the first screen, 14 changes and the last: {labels:?}"
    );
    for i in 1..=14 {
        let at = format!("Frame at 00:{:04.1}:", i as f64 * 4.0);
        assert!(
            labels.contains(&at.as_str()),
            "{at} missing from {labels:?}"
        );
    }
    // The video uploaded during the scan is not left behind.
    assert!(
        server.fake.files().iter().all(|f| f.deleted),
        "{:?}",
        server.fake.files()
    );
}

#[tokio::test]
async fn a_sound_track_is_billed_and_counted_in_what_the_default_would_cost() {
    let server = TestServer::start().await;
    let video = server.media.path().join("with-sound.webm");
    let status = Command::new("ffmpeg")
        .args([
            "-v",
            "error",
            "-y",
            "-f",
            "lavfi",
            "-i",
            "color=c=white:s=640x360:r=25:d=30",
        ])
        .args(["-f", "lavfi", "-i", "sine=frequency=440:duration=30"])
        .args(["-vf", &panel(10.0, None, 20, 60)])
        .args([
            "-c:v",
            "libvpx",
            "-deadline",
            "realtime",
            "-cpu-used",
            "8",
            "-c:a",
            "libopus",
        ])
        .arg(&video)
        .status()
        .unwrap();
    assert!(status.success());
    let (auto, _) = analyse(&server, &video, "auto").await;
    let (full, _) = analyse(&server, &video, "full").await;
    let full_in = full["usage"]["inputTokens"].as_u64().unwrap();
    // 30 s of sound is 960 tokens, about 10 % of this call: leaving it out would show.
    let said = auto["sampling"]["defaultSamplingInputTokens"]
        .as_u64()
        .unwrap();
    assert!(said.abs_diff(full_in) * 40 < full_in, "{said} vs {full_in}");
    // The clips carry the sound of the seconds they cover: all of it, here.
    let auto_in = auto["usage"]["inputTokens"].as_u64().unwrap();
    assert!(auto_in > 30 * 32, "{auto_in}");
}

#[tokio::test]
async fn a_recording_that_is_all_motion_goes_whole() {
    let server = TestServer::start().await;
    // A video player: the picture changes all the time.
    let video = server.media.path().join("player.webm");
    let status = Command::new("ffmpeg")
        .args([
            "-v",
            "error",
            "-y",
            "-f",
            "lavfi",
            "-i",
            "testsrc2=s=640x360:r=25:d=20",
        ])
        .args([
            "-c:v",
            "libvpx",
            "-b:v",
            "1M",
            "-deadline",
            "realtime",
            "-cpu-used",
            "8",
        ])
        .arg(&video)
        .status()
        .unwrap();
    assert!(status.success());
    let (result, sent) = analyse(&server, &video, "auto").await;
    assert_eq!(result["sampling"]["used"], "full", "{result}");
    assert_eq!(sampled_times(&sent), vec![None]);
    assert_eq!(result["framesAnalysed"], 20);
}

#[tokio::test]
async fn a_scan_slower_than_the_time_left_sends_the_whole_video_in_time() {
    let server = TestServer::start().await;
    // An ffmpeg that takes 20 s to start (nextest runs each test in its own process, so the
    // variable reaches only this server).
    let slow = server.media.path().join("slow-ffmpeg");
    std::fs::write(&slow, "#!/bin/sh\nsleep 20\nexec ffmpeg \"$@\"\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&slow, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::env::set_var("VAIDER_FFMPEG", &slow);
    let video = server.media_path("login-flow.webm");
    let started = std::time::Instant::now();
    let (status, body) = server
        .post_analyse(json!({"videoPath": video, "timeoutSec": 6, "sampling": "auto"}))
        .await;
    assert_eq!(status, 200, "{body}");
    assert!(started.elapsed().as_secs() < 6, "{:?}", started.elapsed());
    assert_eq!(body["sampling"]["used"], "full", "{body}");
    assert!(body["sampling"]["reason"]
        .as_str()
        .unwrap()
        .contains("not done in time"));
    let sent = server.fake.generate_requests().pop().unwrap();
    assert_eq!(sampled_times(&sent), vec![None]);
}

#[tokio::test]
async fn a_bad_sampling_is_refused_with_the_choices() {
    let server = TestServer::start().await;
    let client = server.mcp().await;
    let video = server.media_path("login-flow.webm");
    let outcome = client
        .call_tool(
            rmcp::model::CallToolRequestParams::new("analyze_video").with_arguments(
                json!({"video_source": video, "sampling": "sometimes"})
                    .as_object()
                    .unwrap()
                    .clone(),
            ),
        )
        .await;
    let message = format!("{outcome:?}");
    assert!(message.contains("auto, full or keyframes"), "{message}");
    // REST and the config say the same.
    let (status, body) = server
        .post_analyse(json!({"videoPath": video, "sampling": "sometimes"}))
        .await;
    assert_eq!(status, 422, "{body}");
}
