//! The yardstick for Vaider's uploads: the `curl` command doing the four Gemini calls an
//! analysis needs (resumable upload start, the whole file streamed in one `upload, finalize`
//! request, the file's GET, generateContent) against the same fake, timed end to end.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use tokio::process::Command;

/// One timed run of the four calls.
pub struct CurlRun {
    pub total: Duration,
    /// The `upload, finalize` request alone.
    pub upload: Duration,
    /// "files/abc123", for deleting it afterwards (outside the timing).
    pub file_name: String,
}

/// Runs the four calls with the `curl` binary (one process each, as a script would).
pub async fn four_calls(base: &str, key: &str, video: &Path, mime: &str) -> Result<CurlRun> {
    let size = std::fs::metadata(video)
        .with_context(|| format!("stat {}", video.display()))?
        .len();
    let started = Instant::now();
    let head = curl(&[
        "-D",
        "-",
        "-o",
        "/dev/null",
        "-X",
        "POST",
        &format!("{base}/upload/v1beta/files"),
        "-H",
        &format!("x-goog-api-key: {key}"),
        "-H",
        "X-Goog-Upload-Protocol: resumable",
        "-H",
        "X-Goog-Upload-Command: start",
        "-H",
        &format!("X-Goog-Upload-Header-Content-Length: {size}"),
        "-H",
        &format!("X-Goog-Upload-Header-Content-Type: {mime}"),
        "-H",
        "Content-Type: application/json",
        "--data",
        r#"{"file":{"display_name":"curl-bench"}}"#,
    ])
    .await?;
    let upload_url = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("x-goog-upload-url")
                .then(|| value.trim().to_string())
        })
        .context("the start answer has no X-Goog-Upload-URL")?;

    let upload_started = Instant::now();
    let video_arg = video.to_string_lossy();
    // `-T` streams the file (`--data-binary @file` would read it into memory first); the
    // empty `Expect:` stops curl from waiting for a 100 Continue before the body.
    let answer = curl(&[
        "-X",
        "POST",
        "-T",
        &video_arg,
        "-H",
        "Expect:",
        "-H",
        "X-Goog-Upload-Offset: 0",
        "-H",
        "X-Goog-Upload-Command: upload, finalize",
        &upload_url,
    ])
    .await?;
    let upload = upload_started.elapsed();
    let answer: serde_json::Value =
        serde_json::from_str(&answer).context("the finalize answer is not JSON")?;
    let file = &answer["file"];
    let (Some(name), Some(uri)) = (file["name"].as_str(), file["uri"].as_str()) else {
        bail!("the finalize answer has no file name or uri: {answer}");
    };

    curl(&[
        &format!("{base}/v1beta/{name}"),
        "-H",
        &format!("x-goog-api-key: {key}"),
    ])
    .await?;
    let generate = serde_json::json!({"contents": [{"role": "user", "parts": [
        {"fileData": {"fileUri": uri, "mimeType": mime}},
        {"text": "Describe the video step by step."}
    ]}]});
    let answer = curl(&[
        "-X",
        "POST",
        &format!("{base}/v1beta/models/gemini-3.5-flash-lite:generateContent"),
        "-H",
        &format!("x-goog-api-key: {key}"),
        "-H",
        "Content-Type: application/json",
        "--data",
        &generate.to_string(),
    ])
    .await?;
    let total = started.elapsed();
    if !answer.contains("candidates") {
        bail!("generateContent did not answer with candidates: {answer}");
    }
    Ok(CurlRun {
        total,
        upload,
        file_name: name.to_string(),
    })
}

/// `curl -sS --fail-with-body ARGS`; its stdout, or an error with its stderr.
async fn curl(args: &[&str]) -> Result<String> {
    let output = Command::new("curl")
        .args(["-sS", "--fail-with-body"])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .await
        .context("run curl (is it installed?)")?;
    if !output.status.success() {
        bail!(
            "curl failed ({}): {}{}",
            output.status,
            String::from_utf8_lossy(&output.stderr),
            String::from_utf8_lossy(&output.stdout)
        );
    }
    String::from_utf8(output.stdout).context("curl printed something that is not UTF-8")
}
