//! Shots of the desktop: the whole (primary) screen, or one window found by its title or its
//! application's name, through xcap's cross-platform API (X11 and Wayland on Linux, macOS,
//! Windows). xcap blocks, so the capture runs on a blocking thread.

use std::io::Cursor;

use image::{ImageFormat, RgbaImage};
use xcap::{Monitor, Window};

use crate::{CaptureError, Environment, Shot};

/// Appended to "no such window" under Wayland, where the cause is the protocol, not the user.
pub(crate) const WAYLAND_WINDOWS_NOTE: &str = ". This is a Wayland session: Wayland does not let \
one program list or capture another's windows, so only X11 (XWayland) windows can be found; \
capture the whole screen instead (the desktop may ask for permission) or run the app under X11";

/// The contract's platform name for this machine's desktop.
const PLATFORM: &str = if cfg!(target_os = "macos") {
    "macos"
} else if cfg!(target_os = "windows") {
    "windows"
} else {
    "linux"
};

/// Shoots the screen, or the window whose title or app name contains `window`.
pub(crate) async fn capture(window: Option<&str>, env: &Environment) -> Result<Shot, CaptureError> {
    if !has_display(env) {
        return Err(CaptureError::NoDisplay);
    }
    let wayland = is_wayland(env);
    let window = window.map(str::to_owned);
    tokio::task::spawn_blocking(move || {
        let image = match window {
            Some(wanted) => capture_window(&wanted, wayland)?,
            None => capture_screen()?,
        };
        encode(image)
    })
    .await
    .map_err(|error| CaptureError::Desktop {
        doing: "capturing",
        reason: error.to_string(),
    })?
}

/// macOS and Windows always have a screen; on Linux a display server must be named.
fn has_display(env: &Environment) -> bool {
    if cfg!(any(target_os = "macos", target_os = "windows")) {
        return true;
    }
    let set = |var: &Option<std::ffi::OsString>| var.as_ref().is_some_and(|v| !v.is_empty());
    set(&env.display) || set(&env.wayland_display)
}

fn is_wayland(env: &Environment) -> bool {
    cfg!(target_os = "linux")
        && (env.session_type.as_deref() == Some("wayland".as_ref())
            || env.wayland_display.as_ref().is_some_and(|v| !v.is_empty()))
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

fn encode(image: RgbaImage) -> Result<Shot, CaptureError> {
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
        platform: PLATFORM,
    })
}

fn failed(doing: &'static str) -> impl Fn(xcap::XCapError) -> CaptureError {
    move |error| CaptureError::Desktop {
        doing,
        reason: error.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wayland_is_recognised_from_the_session_type_or_its_display() {
        let session = Environment {
            session_type: Some("wayland".into()),
            display: Some(":0".into()),
            ..Environment::default()
        };
        let socket = Environment {
            wayland_display: Some("wayland-0".into()),
            ..Environment::default()
        };
        let x11 = Environment {
            display: Some(":0".into()),
            session_type: Some("x11".into()),
            ..Environment::default()
        };
        assert_eq!(is_wayland(&session), cfg!(target_os = "linux"));
        assert_eq!(is_wayland(&socket), cfg!(target_os = "linux"));
        assert!(!is_wayland(&x11));
    }

    #[test]
    fn a_missing_window_under_wayland_says_why_windows_cannot_be_seen() {
        let err = CaptureError::NoWindow {
            wanted: "editor".into(),
            seen: vec![],
            wayland: true,
        };
        let message = err.to_string();
        assert!(message.contains("\"editor\""), "{message}");
        assert!(message.contains("Wayland does not let"), "{message}");
    }
}
