//! Shooting the screen or a window through xcap's cross-platform API (X11 and Wayland on
//! Linux, macOS, Windows), as PNG. Built with the `desktop` feature only; desktop.rs decides
//! whether to call it.

use std::io::Cursor;

use image::{ImageFormat, RgbaImage};
use xcap::{Monitor, Window};

use crate::{CaptureError, Shot};

/// Shoots the screen, or the window whose title or app name contains `window`. Blocks.
pub(crate) fn shoot(
    window: Option<&str>,
    wayland: bool,
    platform: &'static str,
) -> Result<Shot, CaptureError> {
    let image = match window {
        Some(wanted) => capture_window(wanted, wayland)?,
        None => capture_screen()?,
    };
    encode(image, platform)
}

fn capture_screen() -> Result<RgbaImage, CaptureError> {
    let monitors = Monitor::all().map_err(failed("listing the screens"))?;
    // The primary screen is the one the user looks at; without one, the first listed.
    let primary = monitors
        .iter()
        .position(|monitor| monitor.is_primary().unwrap_or(false))
        .unwrap_or(0);
    let monitor = monitors.get(primary).ok_or(CaptureError::Desktop {
        doing: "listing the screens",
        reason: "the display has no screen".into(),
    })?;
    monitor
        .capture_image()
        .map_err(failed("capturing the screen"))
}

fn capture_window(wanted: &str, wayland: bool) -> Result<RgbaImage, CaptureError> {
    let windows = Window::all().map_err(failed("listing the windows"))?;
    let wanted_lower = wanted.to_lowercase();
    let mut seen = Vec::new();
    for window in &windows {
        let title = window.title().unwrap_or_default();
        let app = window.app_name().unwrap_or_default();
        let matches = [&title, &app]
            .iter()
            .any(|name| name.to_lowercase().contains(&wanted_lower));
        // A minimised window has no pixels on screen to capture.
        if matches && !window.is_minimized().unwrap_or(false) {
            return window
                .capture_image()
                .map_err(failed("capturing the window"));
        }
        seen.push(if app.is_empty() || app == title {
            format!("{title:?}")
        } else {
            format!("{title:?} ({app})")
        });
    }
    Err(CaptureError::NoWindow {
        wanted: wanted.into(),
        seen,
        wayland,
    })
}

fn encode(image: RgbaImage, platform: &'static str) -> Result<Shot, CaptureError> {
    let (width, height) = image.dimensions();
    let mut png = Vec::new();
    image
        .write_to(&mut Cursor::new(&mut png), ImageFormat::Png)
        .map_err(|error| CaptureError::Desktop {
            doing: "encoding the PNG",
            reason: error.to_string(),
        })?;
    Ok(Shot {
        png,
        width,
        height,
        platform,
        ignored: Vec::new(),
        unmatched_selectors: Vec::new(),
    })
}

fn failed(doing: &'static str) -> impl Fn(xcap::XCapError) -> CaptureError {
    move |error| CaptureError::Desktop {
        doing,
        reason: error.to_string(),
    }
}
