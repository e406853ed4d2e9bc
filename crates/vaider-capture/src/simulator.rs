//! Shots of mobile simulators through their vendors' command-line tools: the booted iOS
//! simulator through `xcrun simctl`, an Android emulator or device through `adb`.

use std::ffi::OsStr;

use crate::programs::{find_program, run};
use crate::{shot_from_png, CaptureError, Environment, Shot};

const IOS_SCREENSHOT: &str = "xcrun simctl io booted screenshot";
const ADB_STATE: &str = "adb get-state";
const ADB_SCREENCAP: &str = "adb exec-out screencap -p";

/// Shoots the booted iOS simulator into a temporary file and returns its bytes.
pub(crate) async fn capture_ios(env: &Environment) -> Result<Shot, CaptureError> {
    let xcrun = find_program("xcrun", env.path.as_deref()).ok_or(CaptureError::ProgramMissing {
        program: "xcrun",
        install: "install Xcode and its command-line tools (macOS only)",
    })?;
    let folder = tempfile::tempdir().map_err(|source| CaptureError::ProgramIo {
        command: IOS_SCREENSHOT,
        source,
    })?;
    let file = folder.path().join("simulator.png");
    let args = [
        OsStr::new("simctl"),
        OsStr::new("io"),
        OsStr::new("booted"),
        OsStr::new("screenshot"),
        file.as_os_str(),
    ];
    let hint = ": boot a simulator first (open Simulator.app or `xcrun simctl boot <device>`)";
    run(&xcrun, &args, env.path.as_ref(), IOS_SCREENSHOT, hint).await?;
    let png = tokio::fs::read(&file)
        .await
        .map_err(|source| CaptureError::ProgramIo {
            command: IOS_SCREENSHOT,
            source,
        })?;
    shot_from_png(png, "ios-simulator", "the iOS simulator")
}

/// Shoots the device adb talks to; `adb exec-out` passes the PNG through untouched on stdout.
pub(crate) async fn capture_android(env: &Environment) -> Result<Shot, CaptureError> {
    let adb = find_program("adb", env.path.as_deref()).ok_or(CaptureError::ProgramMissing {
        program: "adb",
        install: "install the Android SDK platform-tools (apt-get install adb)",
    })?;
    let no_device = ": start an emulator or connect a device, then check `adb devices`";
    // Asked first so that "no device" is a clear answer rather than a failed screencap.
    let state = run(
        &adb,
        &[OsStr::new("get-state")],
        env.path.as_ref(),
        ADB_STATE,
        no_device,
    )
    .await?;
    let state = String::from_utf8_lossy(&state).trim().to_string();
    if state != "device" {
        return Err(CaptureError::NoAndroidDevice { state });
    }
    let args = [
        OsStr::new("exec-out"),
        OsStr::new("screencap"),
        OsStr::new("-p"),
    ];
    let png = run(&adb, &args, env.path.as_ref(), ADB_SCREENCAP, no_device).await?;
    shot_from_png(png, "android-emulator", "adb screencap")
}
