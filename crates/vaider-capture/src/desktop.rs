//! Shots of the desktop: the whole (primary) screen, or one window found by its title or its
//! application's name. The shooting itself (screen.rs, through xcap) is built only with the
//! `desktop` feature, since on Linux it builds against the screen's system libraries; without
//! it, a desktop capture says how to add it. It blocks, so it runs on a blocking thread.

use crate::{CaptureError, Environment, Shot};

/// Appended to "no such window" under Wayland, where the cause is the protocol, not the user.
pub(crate) const WAYLAND_WINDOWS_NOTE: &str = ". This is a Wayland session: Wayland does not let \
one program list or capture another's windows, so only X11 (XWayland) windows can be found; \
capture the whole screen instead (the desktop may ask for permission) or run the app under X11";

#[cfg(feature = "desktop")]
use crate::screen::shoot;

/// Without the `desktop` feature there is nothing to shoot with (never reached: the build is
/// checked first).
#[cfg(not(feature = "desktop"))]
fn shoot(_window: Option<&str>, _wayland: bool, _platform: &str) -> Result<Shot, CaptureError> {
    Err(not_built())
}

/// What a build without the `desktop` feature answers, with the command that adds it.
fn not_built() -> CaptureError {
    CaptureError::NotBuilt {
        part: "desktop and window capture",
        feature: "desktop-capture",
    }
}

/// The contract's platform name for this machine's desktop.
const PLATFORM: &str = if cfg!(target_os = "macos") {
    "macos"
} else if cfg!(target_os = "windows") {
    "windows"
} else {
    "linux"
};

/// Whether this build can shoot the desktop (the `desktop` feature).
const BUILT: bool = cfg!(feature = "desktop");

/// Shoots the screen, or the window whose title or app name contains `window`.
pub(crate) async fn capture(window: Option<&str>, env: &Environment) -> Result<Shot, CaptureError> {
    capture_if_built(window, env, BUILT).await
}

/// [`capture`], with whether this build has the desktop part given (so either answer can be
/// tested in any build).
async fn capture_if_built(
    window: Option<&str>,
    env: &Environment,
    built: bool,
) -> Result<Shot, CaptureError> {
    if !has_display(env) {
        return Err(CaptureError::NoDisplay);
    }
    if !built {
        return Err(not_built());
    }
    let wayland = is_wayland(env);
    let window = window.map(str::to_owned);
    tokio::task::spawn_blocking(move || shoot(window.as_deref(), wayland, PLATFORM))
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

    #[tokio::test]
    async fn a_build_without_desktop_capture_says_the_command_that_adds_it() {
        let env = Environment {
            display: Some(":0".into()),
            ..Environment::default()
        };
        let err = capture_if_built(Some("editor"), &env, false)
            .await
            .unwrap_err();
        assert!(matches!(err, CaptureError::NotBuilt { .. }), "{err:?}");
        let message = err.to_string();
        assert!(
            message.contains("bash scripts/install.sh --with desktop-capture"),
            "{message}"
        );
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
