//! Token rules per model family, end to end: a recording and a screenshot go through the
//! pipeline to the fake Gemini under a Gemini 2.x name and a Gemini 3 name. The fake counts
//! `promptTokenCount` by the documented table (its own code, not Vaider's); Vaider's estimate
//! must come within 2 % of it, and what each part asked for (`mediaResolution`) is read from
//! the requests the fake received.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use vaider_core::analysis::tools;

use common::TestServer;
use serde_json::Value;
use vaider_core::progress::NoProgress;
use vaider_core::sampling::VideoSampling;
use vaider_core::{AnalysisRequest, AnalysisResult, Door, Tool};

const GEMINI_2: &str = "gemini-2.5-flash-lite";
const GEMINI_3: &str = "gemini-3.5-flash-lite";

/// A 30 s 800x450 VP8 WebM (Playwright's format, no sound) whose panels appear at 4, 11, 17.5
/// and 25 s; the one at 11 s has text on it, the others are flat colour.
fn recording(dir: &Path) -> PathBuf {
    let path = dir.join("four-changes.webm");
    let mut filters = vec!["drawbox=x=0:y=0:w=800:h=40:color=0x334455:t=fill".to_string()];
    for (i, at) in [4.0, 11.0, 17.5, 25.0].iter().enumerate() {
        filters.push(format!(
            "drawbox=enable='gte(t,{at})':x={}:y=60:w=170:h=150:color=0x2060a0:t=fill",
            20 + i * 190
        ));
    }
    filters.push(
        "drawtext=enable='gte(t,11)':text='Welcome back, Ada':x=215:y=120:fontsize=16:fontcolor=white"
            .to_string(),
    );
    let status = Command::new("ffmpeg")
        .args(["-v", "error", "-y", "-f", "lavfi"])
        .args(["-i", "color=c=white:s=800x450:r=25:d=30"])
        .args(["-vf", &filters.join(",")])
        .args(["-c:v", "libvpx", "-b:v", "1M", "-deadline", "realtime"])
        .args(["-cpu-used", "8"])
        .arg(&path)
        .status()
        .expect("ffmpeg (scripts/test.sh installs it)");
    assert!(status.success());
    path
}

async fn analyse(
    server: &TestServer,
    tool: Tool,
    source: &Path,
    model: &str,
    sampling: Option<VideoSampling>,
) -> (AnalysisResult, Value) {
    let mut request = AnalysisRequest::new(tool, Door::Cli, source.display().to_string());
    request.model = Some(model.to_string());
    request.sampling = sampling;
    request.no_cache = true;
    let result = match server.engine.analyse(request, &NoProgress).await {
        Ok(result) => result,
        Err(failure) => panic!("{model}: {failure}"),
    };
    let sent = server.fake.generate_requests().pop().expect("a request");
    (result, sent)
}

/// The estimate is within 2 % of what the fake counted.
fn assert_estimate_close(result: &AnalysisResult, what: &str) {
    let counted = result.usage.input_tokens;
    let estimate = result
        .usage
        .estimated_input_tokens
        .unwrap_or_else(|| panic!("{what}: no estimate"));
    assert!(
        estimate.abs_diff(counted) * 50 <= counted,
        "{what} on {}: estimated {estimate}, Gemini counted {counted}",
        result.model
    );
}

/// The `mediaResolution` level of each media part sent (None where a part sets none).
fn part_levels(sent: &Value) -> Vec<Option<String>> {
    sent["contents"][0]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p.get("fileData").is_some() || p.get("inlineData").is_some())
        .map(|p| p["mediaResolution"]["level"].as_str().map(str::to_string))
        .collect()
}

#[tokio::test]
async fn the_estimate_of_a_video_is_within_two_percent_on_both_families() {
    let server = TestServer::start().await;
    let video = recording(server.media.path());
    for model in [GEMINI_2, GEMINI_3] {
        let (result, sent) = analyse(
            &server,
            tools::ANALYZE_VIDEO,
            &video,
            model,
            Some(VideoSampling::Auto),
        )
        .await;
        let sampling = result.sampling.as_ref().expect("a sampling report");
        assert_eq!(
            sampling.used.as_str(),
            "clips",
            "{model}: {}",
            sampling.reason
        );
        assert_estimate_close(&result, "auto-sampled video");
        assert!(
            sampling.default_sampling_input_tokens > result.usage.input_tokens,
            "{model}: auto must cost less than Gemini's default sampling"
        );
        let levels = part_levels(&sent);
        assert_eq!(levels.len(), 5, "{model}: one clip per still stretch");
        if model == GEMINI_3 {
            // The clip where text appeared at HIGH so that it reads; the flat panels at the
            // default; nothing for the whole request.
            let high = Some("MEDIA_RESOLUTION_HIGH".to_string());
            assert_eq!(levels, vec![None, None, high, None, None], "{levels:?}");
            assert_eq!(sampling.media_resolution, "mixed");
        } else {
            assert!(levels.iter().all(Option::is_none), "{model}: {levels:?}");
        }
        assert!(
            sent["generationConfig"].get("mediaResolution").is_none(),
            "{model}: {sent}"
        );
    }
}

#[tokio::test]
async fn the_estimate_of_a_screenshot_is_within_two_percent_on_both_families() {
    let server = TestServer::start().await;
    let shot = server.media_path("login.png");
    let (two, sent2) = analyse(&server, tools::ANALYZE_IMAGE, &shot, GEMINI_2, None).await;
    assert_estimate_close(&two, "screenshot");
    assert_eq!(part_levels(&sent2), vec![None]);
    let (three, sent3) = analyse(&server, tools::ANALYZE_IMAGE, &shot, GEMINI_3, None).await;
    assert_estimate_close(&three, "screenshot");
    assert_eq!(
        part_levels(&sent3),
        vec![Some("MEDIA_RESOLUTION_HIGH".to_string())]
    );
    // The same screenshot and prompt: the image alone costs 1120 on Gemini 3, 258 on 2.x.
    assert_eq!(
        three.usage.input_tokens - two.usage.input_tokens,
        1120 - 258
    );
    // The history keeps the estimate beside what Gemini counted.
    let kept = server
        .engine
        .history()
        .result::<AnalysisResult>(&three.interaction_id)
        .unwrap()
        .unwrap();
    assert_eq!(kept.usage, three.usage);
}

#[tokio::test]
async fn keyframes_go_at_medium_on_gemini_3_and_the_default_is_priced_for_the_model() {
    let server = TestServer::start().await;
    let video = recording(server.media.path());
    let (keyframes, sent) = analyse(
        &server,
        tools::ANALYZE_VIDEO,
        &video,
        GEMINI_3,
        Some(VideoSampling::Keyframes),
    )
    .await;
    let levels = part_levels(&sent);
    assert_eq!(levels.len(), 6, "the first screen, 4 changes and the last");
    assert!(
        levels
            .iter()
            .all(|l| l.as_deref() == Some("MEDIA_RESOLUTION_MEDIUM")),
        "{levels:?}"
    );
    assert_estimate_close(&keyframes, "keyframes");

    // What auto says Gemini's default sampling would cost is what it costs on this model.
    let (auto, _) = analyse(
        &server,
        tools::ANALYZE_VIDEO,
        &video,
        GEMINI_3,
        Some(VideoSampling::Auto),
    )
    .await;
    let (full, sent) = analyse(
        &server,
        tools::ANALYZE_VIDEO,
        &video,
        GEMINI_3,
        Some(VideoSampling::Full),
    )
    .await;
    assert_eq!(
        part_levels(&sent),
        vec![None],
        "the whole video as Gemini samples it"
    );
    assert_estimate_close(&full, "whole video");
    let said = auto.sampling.unwrap().default_sampling_input_tokens;
    let counted = full.usage.input_tokens;
    assert!(
        said.abs_diff(counted) * 50 <= counted,
        "{said} vs {counted}"
    );
}
