//! The iOS and Android adapters against stub `xcrun` and `adb` programs that this test writes
//! into its own folder and passes as the `PATH`, and the error of an automatic capture when no
//! adapter is available.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use vaider_capture::{adapter, capture_in, CaptureError, Environment, Target};

/// A 3x2 PNG with a pixel the stubs cannot have made up.
fn known_png() -> Vec<u8> {
    let mut image = image::RgbaImage::from_pixel(3, 2, image::Rgba([10, 20, 30, 255]));
    image.put_pixel(2, 1, image::Rgba([200, 100, 50, 255]));
    let mut png = Vec::new();
    image
        .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .unwrap();
    png
}

/// Writes an executable script through `sh`, so this process never holds the file open for
/// writing while another test thread starts a program ("text file busy").
fn write_stub(dir: &Path, name: &str, script: &str) {
    let file = dir.join(name);
    let mut writer = Command::new("/bin/sh")
        .arg("-c")
        .arg("cat > \"$1\" && chmod +x \"$1\"")
        .arg("sh")
        .arg(&file)
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    writer
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    assert!(writer.wait().unwrap().success());
}

/// A folder holding the known PNG and the stubs, and an environment whose PATH is only it.
fn stubs(scripts: &[(&str, &str)]) -> (tempfile::TempDir, Environment) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("known.png"), known_png()).unwrap();
    for (name, script) in scripts {
        let script = script.replace("KNOWN", &dir.path().join("known.png").display().to_string());
        write_stub(dir.path(), name, &script);
    }
    let env = Environment {
        path: Some(dir.path().as_os_str().to_owned()),
        ..Environment::default()
    };
    (dir, env)
}

const XCRUN_OK: &str = "#!/bin/sh
[ \"$1 $2 $3 $4\" = 'simctl io booted screenshot' ] || { echo \"unexpected: $*\" >&2; exit 2; }
/bin/cp 'KNOWN' \"$5\"
echo 'Wrote screenshot to: '\"$5\"
";

const XCRUN_NOTHING_BOOTED: &str = "#!/bin/sh
echo 'No devices are booted.' >&2
exit 149
";

const ADB_OK: &str = "#!/bin/sh
case \"$*\" in
  'get-state') echo device ;;
  'exec-out screencap -p') /bin/cat 'KNOWN' ;;
  *) echo \"unexpected: $*\" >&2; exit 2 ;;
esac
";

const ADB_NO_DEVICE: &str = "#!/bin/sh
echo 'error: no devices/emulators found' >&2
exit 1
";

#[tokio::test]
async fn the_ios_adapter_returns_the_simulators_png() {
    let (_dir, env) = stubs(&[("xcrun", XCRUN_OK)]);
    let shot = capture_in(&Target::Ios, &env).await.unwrap();
    assert_eq!(shot.png, known_png());
    assert_eq!((shot.width, shot.height), (3, 2));
    assert_eq!(shot.platform, "ios-simulator");
}

#[tokio::test]
async fn the_android_adapter_returns_the_screencap_png() {
    let (_dir, env) = stubs(&[("adb", ADB_OK)]);
    let shot = capture_in(&Target::Android, &env).await.unwrap();
    assert_eq!(shot.png, known_png());
    assert_eq!((shot.width, shot.height), (3, 2));
    assert_eq!(shot.platform, "android-emulator");
}

#[tokio::test]
async fn no_booted_simulator_is_an_error_with_what_xcrun_said_and_what_to_do() {
    let (_dir, env) = stubs(&[("xcrun", XCRUN_NOTHING_BOOTED)]);
    let message = capture_in(&Target::Ios, &env)
        .await
        .unwrap_err()
        .to_string();
    assert!(message.contains("No devices are booted."), "{message}");
    assert!(message.contains("simctl boot"), "{message}");
}

#[tokio::test]
async fn no_android_device_is_an_error_saying_to_start_one() {
    let (_dir, env) = stubs(&[("adb", ADB_NO_DEVICE)]);
    let message = capture_in(&Target::Android, &env)
        .await
        .unwrap_err()
        .to_string();
    assert!(message.contains("no devices/emulators found"), "{message}");
    assert!(message.contains("adb devices"), "{message}");
}

#[tokio::test]
async fn a_tool_that_prints_something_other_than_a_png_is_an_error() {
    let adb = "#!/bin/sh\n[ \"$1\" = get-state ] && echo device || echo 'not an image'\n";
    let (_dir, env) = stubs(&[("adb", adb)]);
    let err = capture_in(&Target::Android, &env).await.unwrap_err();
    assert!(matches!(err, CaptureError::NotPng { .. }), "{err}");
}

#[tokio::test]
async fn auto_without_a_display_takes_the_ios_simulator_before_android() {
    let (_dir, env) = stubs(&[("xcrun", XCRUN_OK), ("adb", ADB_OK)]);
    let shot = capture_in(&Target::Auto { web: None }, &env).await.unwrap();
    assert_eq!(shot.platform, "ios-simulator");
}

#[tokio::test]
async fn auto_falls_through_to_android_when_no_simulator_is_booted() {
    let (_dir, env) = stubs(&[("xcrun", XCRUN_NOTHING_BOOTED), ("adb", ADB_OK)]);
    let shot = capture_in(&Target::Auto { web: None }, &env).await.unwrap();
    assert_eq!(shot.platform, "android-emulator");
    assert_eq!(shot.png, known_png());
}

#[tokio::test]
async fn auto_with_nothing_available_names_every_adapter_tried_and_why() {
    let empty = tempfile::tempdir().unwrap();
    let env = Environment {
        path: Some(empty.path().as_os_str().to_owned()),
        ..Environment::default()
    };
    let err = capture_in(&Target::Auto { web: None }, &env)
        .await
        .unwrap_err();
    let CaptureError::NoneWorked(tried) = &err else {
        panic!("expected every adapter to fail, got {err}");
    };
    let names: Vec<_> = tried.iter().map(|attempt| attempt.adapter).collect();
    assert_eq!(
        names,
        [
            adapter::DESKTOP,
            adapter::IOS,
            adapter::ANDROID,
            adapter::WEB
        ]
    );
    let message = err.to_string();
    for expected in [
        "desktop screen (no display to capture",
        "iOS simulator (xcrun not found on PATH",
        "Android emulator (adb not found on PATH",
        "web page (no URL given",
    ] {
        assert!(
            message.contains(expected),
            "{expected:?} missing from: {message}"
        );
    }
}
