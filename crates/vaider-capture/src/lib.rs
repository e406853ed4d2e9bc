//! Capture adapters for `visual_capture`: a shot of a web page, of the desktop screen or one
//! window, of a booted iOS simulator or of an Android emulator, as PNG bytes. With
//! [`Target::Auto`] the adapters are tried in the contract's order until one works, and when
//! none does the error names every adapter tried and why it failed.

mod desktop;
mod devices;
mod programs;
#[cfg(feature = "desktop")]
mod screen;
mod simulator;
mod web;

use std::ffi::OsString;
use std::fmt;

pub use devices::find_device;
pub use vaider_browser::{BrowserError, Device, Viewport};
pub use web::{SelectorRegion, WebPage};

/// What to capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// The first adapter that works: the desktop screen (when there is a display), an iOS
    /// simulator (when `xcrun` is present), an Android device (when `adb` is present and a
    /// device answers), then the web page (only when one is given).
    Auto { web: Option<WebPage> },
    /// A web page in headless Chromium.
    Web(WebPage),
    /// The whole screen, or the first window whose title or application name contains `window`.
    Desktop { window: Option<String> },
    /// The booted iOS simulator (`xcrun simctl io booted screenshot`).
    Ios,
    /// The Android emulator or device that `adb` talks to (`adb exec-out screencap -p`).
    Android,
}

/// A captured image and where it came from.
#[derive(Clone, PartialEq, Eq)]
pub struct Shot {
    pub png: Vec<u8>,
    pub width: u32,
    pub height: u32,
    /// The contract's platform name: "web", "linux", "macos", "windows", "ios-simulator",
    /// "android-emulator".
    pub platform: &'static str,
    /// A web capture's ignore selectors resolved to rectangles in the image's pixels, one per
    /// drawn element they matched.
    pub ignored: Vec<SelectorRegion>,
    /// The ignore selectors that matched no drawn element (not an error: the page may not show
    /// it now).
    pub unmatched_selectors: Vec<String>,
}

impl fmt::Debug for Shot {
    // A shot's bytes are megabytes of noise in a log or an assertion message.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Shot")
            .field("png", &format_args!("{} bytes", self.png.len()))
            .field("width", &self.width)
            .field("height", &self.height)
            .field("platform", &self.platform)
            .field("ignored", &self.ignored)
            .field("unmatched_selectors", &self.unmatched_selectors)
            .finish()
    }
}

/// The parts of the environment the adapters look at, passed in rather than read from the
/// process so that callers (and parallel tests) can give each capture its own.
///
/// `display` and `wayland_display` decide whether the desktop adapter is tried; the capture
/// itself connects to the display of the process (the capture library reads `DISPLAY` itself).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Environment {
    /// Where `xcrun` and `adb` are looked for, and the `PATH` they run with.
    pub path: Option<OsString>,
    /// X11 `DISPLAY`.
    pub display: Option<OsString>,
    /// `WAYLAND_DISPLAY`.
    pub wayland_display: Option<OsString>,
    /// `XDG_SESSION_TYPE` ("wayland", "x11", ...).
    pub session_type: Option<OsString>,
}

impl Environment {
    /// The environment of this process.
    pub fn from_process() -> Environment {
        Environment {
            path: std::env::var_os("PATH"),
            display: std::env::var_os("DISPLAY"),
            wayland_display: std::env::var_os("WAYLAND_DISPLAY"),
            session_type: std::env::var_os("XDG_SESSION_TYPE"),
        }
    }
}

/// An adapter that was tried and why it did not give a shot.
#[derive(Debug)]
pub struct Attempt {
    pub adapter: &'static str,
    pub error: CaptureError,
}

/// Why a capture failed. Each message says what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error(
        "no display to capture: neither DISPLAY nor WAYLAND_DISPLAY is set \
         (run inside a desktop session, or start Xvfb and set DISPLAY)"
    )]
    NoDisplay,
    #[error("the desktop capture failed while {doing}: {reason}")]
    Desktop { doing: &'static str, reason: String },
    #[error("no window whose title or application name contains {wanted:?}; open windows: {seen}{wayland_note}",
        seen = if seen.is_empty() { "none listed (is a window manager running?)".to_string() } else { seen.join(", ") },
        wayland_note = if *wayland { desktop::WAYLAND_WINDOWS_NOTE } else { "" })]
    NoWindow {
        wanted: String,
        seen: Vec<String>,
        wayland: bool,
    },
    #[error("{program} not found on PATH: {install}")]
    ProgramMissing {
        program: &'static str,
        install: &'static str,
    },
    #[error("`{command}` failed ({status}): {output}{hint}")]
    ProgramFailed {
        command: &'static str,
        status: String,
        output: String,
        hint: &'static str,
    },
    #[error("`{command}` did not finish within {seconds} s")]
    ProgramTimedOut { command: &'static str, seconds: u64 },
    #[error("could not run `{command}`: {source}")]
    ProgramIo {
        command: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("no Android device answers adb (state {state:?}): start an emulator or connect a device, then check `adb devices`")]
    NoAndroidDevice { state: String },
    #[error("{source_name} did not give a PNG image: {reason}")]
    NotPng {
        source_name: &'static str,
        reason: String,
    },
    #[error(
        "{part} is not part of this build of Vaider (a headless one): the tray app's .deb and \
         .rpm have it; from source, add it with `bash scripts/install.sh --with {feature}` (or \
         build with `--features {feature}`)"
    )]
    NotBuilt {
        part: &'static str,
        feature: &'static str,
    },
    #[error("no URL given: the web adapter needs the page to open")]
    NoUrl,
    #[error(transparent)]
    Web(#[from] BrowserError),
    #[error("no capture adapter worked; tried {}", tried_list(.0))]
    NoneWorked(Vec<Attempt>),
}

fn tried_list(tried: &[Attempt]) -> String {
    tried
        .iter()
        .map(|attempt| format!("{} ({})", attempt.adapter, attempt.error))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The adapter names used in [`Attempt`] and in the error of [`Target::Auto`].
pub mod adapter {
    pub const DESKTOP: &str = "desktop screen";
    pub const IOS: &str = "iOS simulator";
    pub const ANDROID: &str = "Android emulator";
    pub const WEB: &str = "web page";
}

/// What a caller asks to capture, as `visual_capture` and `vaider capture` take it: every
/// field optional, empty meaning not given.
#[derive(Debug, Clone, Default)]
pub struct Request<'a> {
    /// auto (default), web, desktop, ios or android.
    pub target: &'a str,
    pub url: &'a str,
    pub window: &'a str,
    pub viewport: Option<Viewport>,
    pub full_page: bool,
    /// web: CSS selectors of elements to leave out of later comparisons (a clock, an ad box).
    /// Giving any makes an `auto` capture a web capture.
    pub ignore_selectors: &'a [String],
}

impl Target {
    /// The target a request names; an error, saying what to give, when it names none.
    pub fn from_request(request: &Request<'_>) -> Result<Target, String> {
        let url = request.url.trim();
        let web = (!url.is_empty()).then(|| WebPage {
            url: url.to_string(),
            viewport: request.viewport.unwrap_or_default(),
            full_page: request.full_page,
            ignore_selectors: request.ignore_selectors.to_vec(),
            device: None,
        });
        let window = Some(request.window.trim())
            .filter(|w| !w.is_empty())
            .map(str::to_string);
        let target = request.target.trim().to_ascii_lowercase();
        if !request.ignore_selectors.is_empty() && !matches!(target.as_str(), "" | "auto" | "web") {
            return Err(format!(
                "ignore selectors are CSS selectors of a web page: the {target} target has none \
                 (use ignore regions in the comparison instead)"
            ));
        }
        match target.as_str() {
            // Selectors are a web page's: they pick the web adapter.
            "" | "auto" if !request.ignore_selectors.is_empty() => {
                web.map(Target::Web).ok_or_else(|| {
                    "ignore selectors need the web page's url, e.g. http://localhost:3000"
                        .to_string()
                })
            }
            // A window is on the desktop: naming one picks the desktop adapter.
            "" | "auto" if window.is_some() => Ok(Target::Desktop { window }),
            "" | "auto" => Ok(Target::Auto { web }),
            "web" => web.map(Target::Web).ok_or_else(|| {
                "the web target needs a url, e.g. http://localhost:3000".to_string()
            }),
            "desktop" => Ok(Target::Desktop { window }),
            "ios" => Ok(Target::Ios),
            "android" => Ok(Target::Android),
            other => Err(format!(
                "target {other:?} is not known: use auto, web, desktop, ios or android"
            )),
        }
    }
}

/// Captures `target` with the environment of this process.
pub async fn capture(target: &Target) -> Result<Shot, CaptureError> {
    capture_in(target, &Environment::from_process()).await
}

/// Captures `target` with the environment given.
pub async fn capture_in(target: &Target, env: &Environment) -> Result<Shot, CaptureError> {
    match target {
        Target::Auto { web } => capture_first_available(web.as_ref(), env).await,
        Target::Web(page) => web::capture_page(page).await,
        Target::Desktop { window } => desktop::capture(window.as_deref(), env).await,
        Target::Ios => simulator::capture_ios(env).await,
        Target::Android => simulator::capture_android(env).await,
    }
}

/// The contract's order: the desktop screen, an iOS simulator, an Android device, a web page.
async fn capture_first_available(
    web: Option<&WebPage>,
    env: &Environment,
) -> Result<Shot, CaptureError> {
    let mut tried = Vec::new();
    let attempts = [
        adapter::DESKTOP,
        adapter::IOS,
        adapter::ANDROID,
        adapter::WEB,
    ];
    for name in attempts {
        let result = match name {
            adapter::DESKTOP => desktop::capture(None, env).await,
            adapter::IOS => simulator::capture_ios(env).await,
            adapter::ANDROID => simulator::capture_android(env).await,
            _ => match web {
                Some(page) => web::capture_page(page).await,
                None => Err(CaptureError::NoUrl),
            },
        };
        match result {
            Ok(shot) => return Ok(shot),
            Err(error) => {
                tracing::debug!(adapter = name, %error, "capture adapter not available");
                tried.push(Attempt {
                    adapter: name,
                    error,
                });
            }
        }
    }
    Err(CaptureError::NoneWorked(tried))
}

/// The size of a PNG, read from its header, which also checks that the bytes are a PNG.
fn png_size(png: &[u8], source_name: &'static str) -> Result<(u32, u32), CaptureError> {
    use image::ImageDecoder;
    let decoder =
        image::codecs::png::PngDecoder::new(std::io::Cursor::new(png)).map_err(|error| {
            CaptureError::NotPng {
                source_name,
                reason: error.to_string(),
            }
        })?;
    Ok(decoder.dimensions())
}

/// Wraps PNG bytes from an adapter into a [`Shot`], checking they are a PNG.
fn shot_from_png(
    png: Vec<u8>,
    platform: &'static str,
    source_name: &'static str,
) -> Result<Shot, CaptureError> {
    let (width, height) = png_size(&png, source_name)?;
    Ok(Shot {
        png,
        width,
        height,
        platform,
        ignored: Vec::new(),
        unmatched_selectors: Vec::new(),
    })
}
