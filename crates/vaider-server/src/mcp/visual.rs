//! The visual capture and comparison tools of contracts.md §1: `visual_capture`,
//! `visual_compare`, `visual_prepare` and `visual_cleanup`. Each result
//! is `{success, data}` (or `{success: false, error}`): paths, numbers and sentences; a small
//! thumbnail of the annotated screenshot only when asked (`include_image`).

use std::path::PathBuf;

use rmcp::handler::server::tool::InputResponses as Answers;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock, InputResponses};
use rmcp::service::RequestContext;
use rmcp::{tool, tool_router, ErrorData, RoleServer};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use vaider_capture::{Request as CaptureRequest, Target, Viewport};
use vaider_core::analysis::Door;
use vaider_visual::service::{self, CompareRequest, Removal};

use super::answer::said;
use super::workspace::{answer_in, Need};
use super::VaiderMcp;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct VisualCaptureArgs {
    /// The screenshot's name, kept as `NN-name.png` in the workspace's
    /// .screenshots/phases/, e.g. "before-card-update". Letters, digits, '-', '_', '.'.
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// A web page to capture in headless Chromium, e.g. "http://localhost:5173/cards".
    #[serde(default)]
    pub url: String,
    /// Which adapter: "auto" (default: the desktop screen, an iOS simulator, an Android
    /// emulator, then the web page given as url; the first that works), "web", "desktop",
    /// "ios" or "android".
    #[serde(default)]
    pub target: String,
    /// desktop: capture the first window whose title or application name contains this.
    #[serde(default)]
    pub window: String,
    /// web: the viewport width and height in CSS pixels (default 1280x800).
    #[serde(default)]
    pub viewport_width: u32,
    #[serde(default)]
    pub viewport_height: u32,
    /// web: the whole scrollable page rather than the viewport.
    #[serde(default)]
    pub full_page: bool,
    /// web: CSS selectors of elements every later comparison of this screenshot ignores
    /// (a clock, an ad box), e.g. ["#clock", ".ad"]. Each is resolved in the page at capture
    /// time to rectangles in the screenshot's pixels, kept with it; a selector matching no
    /// drawn element is listed in `unmatched_selectors`, an invalid one is refused.
    #[serde(default)]
    pub ignore_selectors: Vec<String>,
    /// The changes you meant to make, e.g. ["the title is blue"]: when the capture differs from
    /// its approved baseline (.vaider/baselines/NAME@VIEWPORT.png), the model judges each
    /// changed region intentional (one of these), noise or a regression.
    #[serde(default)]
    pub expected_changes: Vec<String>,
    /// Compare with the baseline by pixels alone, without asking the model.
    #[serde(default)]
    pub no_model: bool,
    /// Capture the screen this many times (2-20) and propose what differs run to run (a
    /// clock, a spinner) as ignore regions, kept with the baseline once a person approves.
    #[serde(default)]
    pub learn_noise: u32,
    #[serde(default)]
    pub cwd: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct VisualCompareArgs {
    /// The screenshot before the change: a path (absolute, or relative to the workspace),
    /// e.g. ".screenshots/phases/01-before-card-update.png".
    pub before: String,
    /// The screenshot after the change.
    pub after: String,
    /// The changes you meant to make, e.g. ["the card's padding grew"]; each is matched
    /// against what changed. Default: the list given to visual_prepare, if any.
    #[serde(default)]
    pub expected_changes: Vec<String>,
    /// Also return a small thumbnail of the annotated screenshot inline (default false: the
    /// result gives its path).
    #[serde(default)]
    pub include_image: bool,
    /// The noise tolerance: a changed region with fewer pixels is rendering noise (default 3,
    /// which drops 1-2 px specks and keeps a full stop).
    #[serde(default)]
    pub min_region_pixels: Option<u64>,
    /// A blur in pixels (0 to 3) on both screenshots before the diff, for noisy captures
    /// (another GPU, a lossy codec). Default 0: measured, the minimum area loses fewer small
    /// real changes.
    #[serde(default)]
    pub blur: Option<f32>,
    /// pixelmatch's and odiff's `threshold`, from 0 to 1: the smallest colour difference
    /// (YIQ) that counts; smaller is more sensitive. Default 0.1.
    #[serde(default)]
    pub threshold: Option<f64>,
    /// pixelmatch's `includeAA`: count anti-aliased pixels (smoothed edges) as changes too.
    /// Default false: they are detected, drawn yellow and not counted.
    #[serde(default)]
    pub include_anti_aliasing: Option<bool>,
    /// pixelmatch's `alpha`: the opacity of the faded before-image in the diff image, 0 to 1.
    /// Default 0.1.
    #[serde(default)]
    pub alpha: Option<f64>,
    /// pixelmatch's `diffColor` (odiff's `--diff-color`): changed pixels in the diff image,
    /// as "#rrggbb". Default "#ff0000".
    #[serde(default)]
    pub diff_color: Option<String>,
    /// pixelmatch's `diffColorAlt`: changed pixels that got darker, as "#rrggbb". Default:
    /// `diff_color`.
    #[serde(default)]
    pub diff_color_alt: Option<String>,
    /// pixelmatch's `aaColor`: anti-aliased pixels in the diff image. Default "#ffff00".
    #[serde(default)]
    pub aa_color: Option<String>,
    /// odiff's ignore regions: rectangles (x, y, width, height in pixels) whose pixels never
    /// count as changed, e.g. a clock or an ad. odiff's `x1:y1-x2:y2` is x1, y1, x2 - x1 + 1,
    /// y2 - y1 + 1.
    #[serde(default)]
    pub ignore_regions: Vec<IgnoreRegionArg>,
    /// The provider to explain the change with, instead of the configured one.
    #[serde(default)]
    pub provider: String,
    #[serde(default)]
    pub model: String,
    /// The workspace folder, when the client has no workspace roots.
    #[serde(default)]
    pub cwd: String,
}

/// A rectangle of the screenshots to leave out of the comparison.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
pub struct IgnoreRegionArg {
    pub x: u32,
    pub y: u32,
    pub width: u32,
    pub height: u32,
}

impl VisualCompareArgs {
    /// The comparison options, checked by the one rule every door uses.
    pub fn compare_options(&self) -> Result<vaider_visual::CompareOptions, String> {
        let settings = vaider_visual::CompareSettings {
            min_region_pixels: self.min_region_pixels,
            blur: self.blur,
            threshold: self.threshold,
            include_anti_aliasing: self.include_anti_aliasing,
            alpha: self.alpha,
            diff_color: self.diff_color.clone(),
            diff_color_alt: self.diff_color_alt.clone(),
            aa_color: self.aa_color.clone(),
            ignore_regions: self
                .ignore_regions
                .iter()
                .map(|r| vaider_visual::IgnoreRegion {
                    x: r.x,
                    y: r.y,
                    width: r.width,
                    height: r.height,
                })
                .collect(),
        };
        vaider_visual::CompareOptions::from_settings(&settings).map_err(|e| e.to_string())
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct VisualPrepareArgs {
    /// The changes the next visual_compare should find, one short statement each.
    pub expected_changes_list: Vec<String>,
    #[serde(default)]
    pub cwd: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct VisualCleanupArgs {
    /// One phase number to remove. Without it, all phases but the last `keep_last` go.
    #[serde(default)]
    pub phase_to_remove: u32,
    /// How many of the newest phases to keep (default 3).
    #[serde(default)]
    pub keep_last: u32,
    #[serde(default)]
    pub cwd: String,
}

#[tool_router(router = visual_tools, vis = "pub(super)")]
impl VaiderMcp {
    /// Take a screenshot (web page, desktop, window, simulator) as the next phase.
    #[tool(name = "visual_capture")]
    async fn visual_capture(
        &self,
        Parameters(args): Parameters<VisualCaptureArgs>,
        Answers(answers): Answers,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let project = self.project(&ctx, answers, &args.cwd).await;
        answer_in(project, |project| capture(&self.engine, args, project)).await
    }

    /// Compare two screenshots: a pixel diff, then what changed and whether it was expected.
    #[tool(name = "visual_compare")]
    async fn visual_compare(
        &self,
        Parameters(args): Parameters<VisualCompareArgs>,
        Answers(answers): Answers,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let project = self.project(&ctx, answers, &args.cwd).await;
        answer_in(project, |project| self.compare(args, project, &ctx)).await
    }

    /// Declare the changes the next visual_compare should find.
    #[tool(name = "visual_prepare")]
    async fn visual_prepare(
        &self,
        Parameters(args): Parameters<VisualPrepareArgs>,
        Answers(answers): Answers,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let project = self.project(&ctx, answers, &args.cwd).await;
        answer_in(project, |project| async move {
            let kept = service::declare_expected(&project, &args.expected_changes_list);
            reply(kept, |kept| {
                let sentence = format!(
                    "{} expected changes kept for the next comparison.",
                    kept.len()
                );
                (json!({"expected_changes_list": kept}), sentence)
            })
        })
        .await
    }

    /// Remove old screenshot phases from the project's store.
    #[tool(name = "visual_cleanup")]
    async fn visual_cleanup(
        &self,
        Parameters(args): Parameters<VisualCleanupArgs>,
        Answers(answers): Answers,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let project = self.project(&ctx, answers, &args.cwd).await;
        let which = Removal::of(args.phase_to_remove, args.keep_last);
        answer_in(project, |project| async move {
            let removed = service::remove_screenshots(&project, which).await;
            reply(removed, |removed| {
                let sentence = format!("{} screenshots removed.", removed.len());
                (json!({"removed": removed}), sentence)
            })
        })
        .await
    }
}

impl VaiderMcp {
    /// The project whose `.screenshots/` store the call works in (the one workspace rule), or
    /// the answer to send instead: roots asked of a 2026-07-28 client, or no workspace at all.
    pub(super) async fn project(
        &self,
        ctx: &RequestContext<RoleServer>,
        answers: Option<InputResponses>,
        cwd: &str,
    ) -> Result<PathBuf, CallToolResponse> {
        let workspace = self
            .workspace(ctx, answers.as_ref(), Need::always(cwd))
            .await
            .map_err(CallToolResponse::from)?;
        workspace
            .project()
            .map_err(|e| envelope(Err(e.to_string()), String::new()).into())
    }

    /// `visual_compare` in the project: the comparison, with the annotated picture's thumbnail
    /// when asked.
    async fn compare(
        &self,
        args: VisualCompareArgs,
        project: PathBuf,
        ctx: &RequestContext<RoleServer>,
    ) -> CallToolResult {
        let options = match args.compare_options() {
            Ok(options) => options,
            Err(e) => return envelope(Err(e), String::new()),
        };
        let progress = self.progress(ctx);
        let request = CompareRequest {
            project: &project,
            before: args.before.as_ref(),
            after: args.after.as_ref(),
            expected_changes: args.expected_changes,
            provider: super::call::non_empty(args.provider),
            model: super::call::non_empty(args.model),
            door: Door::Mcp,
            options,
        };
        let outcome = service::compare_screenshots(&self.engine, request, &progress).await;
        drop(progress);
        let thumbnail = match (&outcome, args.include_image) {
            (Ok(data), true) => thumbnail_of(data).await,
            _ => None,
        };
        let mut result = reply(outcome, |data| {
            let value = serde_json::to_value(data).unwrap_or_default();
            (value, crate::text::comparison(data).whole())
        });
        result.content.extend(thumbnail);
        result
    }
}

/// `visual_capture` in the project: the screenshot kept as the next phase.
async fn capture(
    engine: &vaider_core::Vaider,
    args: VisualCaptureArgs,
    project: PathBuf,
) -> CallToolResult {
    let target = match capture_target(&args) {
        Ok(target) => target,
        Err(e) => return envelope(Err(e), String::new()),
    };
    let check = vaider_visual::review::CaptureCheck {
        expected_changes: args.expected_changes.clone(),
        ask_model: !args.no_model,
        model: None,
        learn_noise: args.learn_noise,
    };
    let kept = vaider_visual::review::capture_and_check(
        Some(engine),
        &project,
        &args.name,
        &args.description,
        &target,
        check,
        Door::Mcp,
    )
    .await;
    reply(kept, |data| {
        let value = serde_json::to_value(data).unwrap_or_default();
        (value, crate::text::capture(data))
    })
}

/// A small PNG of the annotated screenshot, as an image block.
async fn thumbnail_of(data: &service::CompareData) -> Option<ContentBlock> {
    // Without changes the annotation follows the answer: wait for it here.
    service::pictures_settled().await;
    let png = vaider_visual::thumbnail(data.annotated_screenshot.as_ref(), 512).ok()?;
    use base64::Engine as _;
    let encoded = base64::engine::general_purpose::STANDARD.encode(png);
    Some(ContentBlock::image(encoded, "image/png"))
}

/// A tool's outcome as its answer: `data` and the sentence `told` makes of the value, or the
/// error.
fn reply<T>(
    outcome: Result<T, service::CompareError>,
    told: impl FnOnce(&T) -> (Value, String),
) -> CallToolResult {
    match outcome {
        Ok(value) => {
            let (data, sentence) = told(&value);
            envelope(Ok(data), sentence)
        }
        Err(e) => envelope(Err(e.to_string()), String::new()),
    }
}

/// The adapter a capture asks for, from its arguments.
fn capture_target(args: &VisualCaptureArgs) -> Result<Target, String> {
    Target::from_request(&CaptureRequest {
        target: &args.target,
        url: &args.url,
        window: &args.window,
        viewport: (args.viewport_width > 0 && args.viewport_height > 0).then_some(Viewport {
            width: args.viewport_width,
            height: args.viewport_height,
        }),
        full_page: args.full_page,
        ignore_selectors: &args.ignore_selectors,
    })
}

/// `{success: true, data}` with a sentence for people (also its `summary`), or
/// `{success: false, error}` as an error result the agent reads and acts on.
pub(super) fn envelope(outcome: Result<Value, String>, sentence: String) -> CallToolResult {
    match outcome {
        Ok(data) => said(sentence, json!({"success": true, "data": data}), false),
        Err(error) => said(
            error.clone(),
            json!({"success": false, "error": error}),
            true,
        ),
    }
}
