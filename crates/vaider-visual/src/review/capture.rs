//! `vaider capture NAME` and `visual_capture` with the review loop: the screenshot kept in the
//! store as before, then compared with its baseline (keyed by the name and the viewport, or
//! the platform for a desktop or device shot). With `learn_noise` the screen is captured that
//! many times first, and what differs run to run is proposed as ignore regions.

use std::path::Path;

use vaider_capture::{Shot, Target};
use vaider_core::{Door, Vaider};

use super::baselines::{BaselineKey, IgnoredArea};
use super::check::{check_capture, CheckRequest};
use crate::service::{keep_shot, CaptureData, CompareError};

/// How a capture is checked against its baseline.
#[derive(Debug, Clone, Default)]
pub struct CaptureCheck {
    /// The changes meant (`--expect`), for the model's `intentional` verdict.
    pub expected_changes: Vec<String>,
    /// Ask the model for a verdict per changed region (`--no-model` turns it off).
    pub ask_model: bool,
    pub model: Option<String>,
    /// Capture the screen this many times (2 to 20) to learn its noise; 0 or 1: once.
    pub learn_noise: u32,
}

/// The most captures a noise lesson takes.
pub const MAX_LEARN_NOISE: u32 = 20;

/// Captures, keeps the shot as the next phase, and checks it against its baseline.
pub async fn capture_and_check(
    engine: Option<&Vaider>,
    project: &Path,
    name: &str,
    description: &str,
    target: &Target,
    check: CaptureCheck,
    door: Door,
) -> Result<CaptureData, CompareError> {
    crate::store::check_name(name).map_err(|e| CompareError(e.to_string()))?;
    if check.learn_noise > MAX_LEARN_NOISE {
        return Err(CompareError(format!(
            "learn_noise takes 2 to {MAX_LEARN_NOISE} captures, not {}",
            check.learn_noise
        )));
    }
    let mut shots = Vec::new();
    for _ in 0..check.learn_noise.max(1) {
        shots.push(
            vaider_capture::capture(target)
                .await
                .map_err(|e| CompareError(e.to_string()))?,
        );
    }
    let proposed_ignore = learned(&shots);
    let Some(shot) = shots.pop() else {
        return Err(CompareError("nothing was captured".into()));
    };
    let variant = variant_of(target, &shot);
    let key = BaselineKey::new(name, &variant).map_err(|e| CompareError(e.to_string()))?;
    let png = shot.png.clone();
    let mut data = keep_shot(project, name, description, shot).await?;
    let ignored = data
        .ignore_regions
        .iter()
        .map(|r| IgnoredArea {
            x: r.x,
            y: r.y,
            width: r.width,
            height: r.height,
            reason: format!("the selector {}", r.selector),
        })
        .collect();
    let request = CheckRequest {
        project,
        key,
        png: &png,
        ignored,
        proposed_ignore,
        expected_changes: check.expected_changes,
        ask_model: check.ask_model,
        door,
        model: check.model,
    };
    let checked = check_capture(engine, request)
        .await
        .map_err(|e| CompareError(e.to_string()))?;
    data.baseline = Some(checked);
    Ok(data)
}

/// The noise of several shots, or none for one.
fn learned(shots: &[Shot]) -> Vec<IgnoredArea> {
    if shots.len() < 2 {
        return Vec::new();
    }
    let images: Vec<image::RgbaImage> = shots
        .iter()
        .filter_map(|s| image::load_from_memory(&s.png).ok())
        .map(|i| i.into_rgba8())
        .collect();
    super::noise::learn_noise(&images)
}

/// A web page's viewport (`1280x800`, `1280x800-full` for a whole page) or device
/// (`iPhone-13`, `iPhone-13-390x500` at a viewport of its own); a desktop or device shot's
/// platform.
pub fn variant_of(target: &Target, shot: &Shot) -> String {
    let page = match target {
        Target::Web(page) => Some(page),
        Target::Auto { web: Some(page) } if shot.platform == "web" => Some(page),
        _ => None,
    };
    match page {
        Some(page) => web_variant(page),
        None => shot.platform.to_string(),
    }
}

/// The variant of a web page's baseline.
pub fn web_variant(page: &vaider_capture::WebPage) -> String {
    let size = format!("{}x{}", page.viewport.width, page.viewport.height);
    let shown = match &page.device {
        Some(device) if device.viewport == page.viewport => file_safe(&device.name),
        Some(device) => format!("{}-{size}", file_safe(&device.name)),
        None => size,
    };
    format!("{shown}{}", if page.full_page { "-full" } else { "" })
}

/// A device's name as part of a file name: "iPhone 13 Pro" → "iPhone-13-Pro", "Galaxy S9+"
/// → "Galaxy-S9-plus" (no two of Playwright's names meet).
fn file_safe(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
            out.push(c);
        } else if c == '+' {
            if !out.is_empty() && !out.ends_with('-') {
                out.push('-');
            }
            out.push_str("plus");
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_end_matches('-').to_string()
}

/// One sentence on a capture's baseline, for the CLI and the MCP tool's text.
pub fn baseline_sentence(check: &super::BaselineCheck) -> String {
    use super::changes::BaselineStatus;
    match (&check.status, &check.change) {
        (BaselineStatus::Unchanged, Some(change)) => format!(
            "Baseline: unchanged ({}){}: approve pending change {} to keep them ignored.",
            check.baseline.display(),
            noise_words(change),
            change.id
        ),
        (BaselineStatus::Unchanged, None) => format!("Baseline: unchanged ({}).", check.baseline.display()),
        (BaselineStatus::New, Some(change)) => format!(
            "Baseline: new, no baseline yet; pending change {} (approve it with `vaider review approve {}`){}.",
            change.id,
            change.id,
            noise_words(change)
        ),
        (_, Some(change)) => {
            let verdicts: Vec<String> = change
                .verdicts
                .iter()
                .map(|v| format!("region {} {} ({})", v.region, v.verdict, v.reason))
                .collect();
            format!(
                "Baseline: changed, {} region(s), {} pixels; pending change {}{}{}.",
                change.regions.len(),
                change.changed_pixels,
                change.id,
                if verdicts.is_empty() { String::new() } else { format!(": {}", verdicts.join("; ")) },
                noise_words(change)
            )
        }
        (status, None) => format!("Baseline: {}.", status.as_str()),
    }
}

fn noise_words(change: &super::PendingChange) -> String {
    match change.proposed_ignore.len() {
        0 => String::new(),
        n => format!("; {n} region(s) that differed run to run proposed as ignored"),
    }
}
