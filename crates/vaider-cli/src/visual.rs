//! `vaider capture` and `vaider compare`: the visual tools from the terminal, through the same
//! code the MCP tools run (the store in the current folder's `.screenshots/`, the pixel diff,
//! the model's explanation through the pipeline).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use vaider_capture::{Request as CaptureRequest, Target, Viewport};
use vaider_core::analysis::Door;
use vaider_core::progress::NoProgress;
use vaider_core::{Config, Vaider};
use vaider_visual::service::{self, CompareRequest};
use vaider_visual::{CompareOptions, CompareSettings};

/// What `vaider capture` was asked.
#[derive(Debug, clap::Args)]
pub struct CaptureArgs {
    /// The screenshot's name, e.g. before-card-update.
    pub name: String,
    #[arg(long, default_value = "")]
    pub description: String,
    /// A web page to capture in headless Chromium.
    #[arg(long)]
    pub url: Option<String>,
    /// The first window whose title or application name contains this.
    #[arg(long)]
    pub window: Option<String>,
    /// auto (default), web, desktop, ios or android.
    #[arg(long)]
    pub target: Option<String>,
    /// The web page's viewport, WIDTHxHEIGHT (default 1280x800).
    #[arg(long, value_parser = crate::parse_viewport)]
    pub viewport: Option<(u32, u32)>,
    /// The whole scrollable page.
    #[arg(long)]
    pub full_page: bool,
    /// A CSS selector of elements later comparisons ignore (a clock, an ad box); repeat it
    /// for more. Resolved in the page at capture time to rectangles kept with the screenshot.
    #[arg(long = "ignore-selector", value_name = "SELECTOR")]
    pub ignore_selectors: Vec<String>,
    /// A change you meant to make, for the model's verdict on a change from the baseline;
    /// repeat for several.
    #[arg(long = "expect")]
    pub expected: Vec<String>,
    /// Compare with the baseline by pixels alone, without the model.
    #[arg(long)]
    pub no_model: bool,
    /// Capture the screen N times (2-20) and propose what differs run to run as ignore regions.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub learn_noise: u32,
    #[arg(long)]
    pub json: bool,
}

pub async fn capture(args: CaptureArgs) -> Result<ExitCode> {
    let project = std::env::current_dir()?;
    let target = match target(&args) {
        Ok(target) => target,
        Err(message) => return Ok(fail(&message, args.json)),
    };
    let engine = match args.no_model {
        true => None,
        false => Some(Vaider::open(Config::load()?)?),
    };
    let check = vaider_visual::review::CaptureCheck {
        expected_changes: args.expected.clone(),
        ask_model: !args.no_model,
        model: None,
        learn_noise: args.learn_noise,
    };
    let outcome = vaider_visual::review::capture_and_check(
        engine.as_deref(),
        &project,
        &args.name,
        &args.description,
        &target,
        check,
        Door::Cli,
    )
    .await;
    match outcome {
        Ok(data) if args.json => print_json(&serde_json::json!({"success": true, "data": data})),
        Ok(data) => {
            println!("{}", data.path);
            eprintln!("{}", vaider_server::text::capture(&data));
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => Ok(fail(&e.to_string(), args.json)),
    }
}

fn target(args: &CaptureArgs) -> Result<Target, String> {
    Target::from_request(&CaptureRequest {
        target: args.target.as_deref().unwrap_or_default(),
        url: args.url.as_deref().unwrap_or_default(),
        window: args.window.as_deref().unwrap_or_default(),
        viewport: args
            .viewport
            .map(|(width, height)| Viewport { width, height }),
        full_page: args.full_page,
        ignore_selectors: &args.ignore_selectors,
    })
}

/// What `vaider compare` was asked.
#[derive(clap::Args)]
pub struct CompareArgs {
    before: PathBuf,
    after: PathBuf,
    /// A change you meant to make; repeat for several.
    #[arg(long = "expect")]
    expected: Vec<String>,
    /// A changed region with fewer pixels is rendering noise (default 3).
    #[arg(long)]
    min_region_pixels: Option<u64>,
    /// Blur both screenshots by this many pixels (0-3) before the diff, for noisy captures.
    #[arg(long)]
    blur: Option<f32>,
    /// pixelmatch's and odiff's threshold, 0 to 1: smaller is more sensitive (default 0.1).
    #[arg(long)]
    threshold: Option<f64>,
    /// Count anti-aliased pixels as changes too (pixelmatch's includeAA).
    #[arg(long)]
    include_anti_aliasing: bool,
    /// Opacity of the faded before-image in the diff image, 0 to 1 (pixelmatch's alpha, 0.1).
    #[arg(long)]
    alpha: Option<f64>,
    /// Changed pixels in the diff image, #rrggbb (pixelmatch's diffColor, default #ff0000).
    #[arg(long)]
    diff_color: Option<String>,
    /// Changed pixels that got darker, #rrggbb (pixelmatch's diffColorAlt).
    #[arg(long)]
    diff_color_alt: Option<String>,
    /// Anti-aliased pixels in the diff image, #rrggbb (pixelmatch's aaColor, #ffff00).
    #[arg(long)]
    aa_color: Option<String>,
    /// A region never counted, as odiff's x1:y1-x2:y2 (corners included); repeat or
    /// separate with commas for several.
    #[arg(long = "ignore", value_delimiter = ',')]
    ignore: Vec<String>,
    #[arg(long)]
    json: bool,
}

impl CompareArgs {
    /// The diff's settings as the other doors take them; an `--ignore` that is not odiff's
    /// `x1:y1-x2:y2` is refused here.
    fn settings(&self) -> Result<CompareSettings> {
        Ok(CompareSettings {
            min_region_pixels: self.min_region_pixels,
            blur: self.blur,
            threshold: self.threshold,
            include_anti_aliasing: self.include_anti_aliasing.then_some(true),
            alpha: self.alpha,
            diff_color: self.diff_color.clone(),
            diff_color_alt: self.diff_color_alt.clone(),
            aa_color: self.aa_color.clone(),
            ignore_regions: self
                .ignore
                .iter()
                .map(|region| vaider_visual::settings::parse_odiff_region(region))
                .collect::<Result<_, _>>()?,
        })
    }
}

/// `vaider compare`: the two screenshots compared, printed; exit 2 on a regression or a
/// missed expected change.
pub async fn compare_command(args: CompareArgs) -> Result<ExitCode> {
    let settings = args.settings()?;
    compare(
        &args.before,
        &args.after,
        args.expected,
        &settings,
        args.json,
    )
    .await
}

pub async fn compare(
    before: &Path,
    after: &Path,
    expected: Vec<String>,
    settings: &CompareSettings,
    json: bool,
) -> Result<ExitCode> {
    let options = CompareOptions::from_settings(settings)?;
    let engine = Vaider::open(Config::load()?)?;
    let project: PathBuf = std::env::current_dir()?;
    let request = CompareRequest {
        project: &project,
        before,
        after,
        expected_changes: expected,
        provider: None,
        model: None,
        door: Door::Cli,
        options,
    };
    let outcome = service::compare_screenshots(&engine, request, &NoProgress).await;
    let exit = print_comparison(outcome, json);
    // The answer is out; the diff image and heat map may still be being written, and a
    // process that exits now would leave them out.
    service::pictures_settled().await;
    exit
}

fn print_comparison(
    outcome: Result<service::CompareData, service::CompareError>,
    json: bool,
) -> Result<ExitCode> {
    match outcome {
        Ok(data) if json => print_json(&serde_json::json!({"success": true, "data": data})),
        Ok(data) => {
            let told = vaider_server::text::comparison(&data);
            println!("{}", told.body);
            eprintln!("\n{}", told.notes);
            let v = &data.validation;
            Ok(if v.regressions || !v.expected_missed.is_empty() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            })
        }
        Err(e) => Ok(fail(&e.to_string(), json)),
    }
}

fn print_json(value: &serde_json::Value) -> Result<ExitCode> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(ExitCode::SUCCESS)
}

fn fail(message: &str, json: bool) -> ExitCode {
    if json {
        println!(
            "{}",
            serde_json::json!({"success": false, "error": message})
        );
    } else {
        eprintln!("vaider: {message}");
    }
    ExitCode::FAILURE
}
