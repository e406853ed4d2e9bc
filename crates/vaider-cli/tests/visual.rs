//! `vaider capture` and `vaider compare` from the terminal: the store lands in the current
//! folder's `.screenshots/`, and a comparison without a change needs no model (and no key).

mod common;

use std::os::unix::fs::PermissionsExt;

use common::*;

#[test]
fn compare_of_identical_screenshots_needs_no_model_and_keeps_the_pictures() {
    let sandbox = Sandbox::new();
    sandbox.media("login.png");
    let mut command = sandbox.vaider();
    command
        .current_dir(sandbox.work())
        .args(["compare", "login.png", "login.png", "--json"]);
    let output = run(command);
    assert!(output.status.success(), "{}", stderr(&output));
    let body: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(body["success"], true, "{body}");
    assert_eq!(body["data"]["pixel_diff"]["total_changes"], 0);
    let annotated = body["data"]["annotated_screenshot"].as_str().unwrap();
    assert!(annotated.starts_with(
        &sandbox
            .work()
            .join(".screenshots/comparisons")
            .display()
            .to_string()
    ));
    assert!(std::path::Path::new(annotated).is_file());
    // The pictures written beside the answer are there before the command exits.
    let comparisons = sandbox.work().join(".screenshots/comparisons");
    assert!(comparisons.join("login-vs-login-diff.png").is_file());
    assert!(comparisons.join("login-vs-login-heatmap.png").is_file());
}

#[test]
fn compare_takes_pixelmatch_and_odiff_options_and_checks_them() {
    let sandbox = Sandbox::new();
    sandbox.media("login.png");
    sandbox.media("login-error.png");
    // odiff's ignore region over the whole 800x500 picture: no change, so no model either.
    let mut command = sandbox.vaider();
    command.current_dir(sandbox.work()).args([
        "compare",
        "login.png",
        "login-error.png",
        "--ignore",
        "0:0-799:499",
        "--threshold",
        "0.05",
        "--json",
    ]);
    let output = run(command);
    assert!(output.status.success(), "{}", stderr(&output));
    let body: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(body["data"]["pixel_diff"]["changed_pixels"], 0, "{body}");
    for (flag, value, says) in [
        ("--threshold", "2", "threshold must be from 0 to 1"),
        (
            "--diff-color",
            "crimson",
            "diff_color must be a colour as #rrggbb",
        ),
        ("--ignore", "10:10-5:5", "an ignore region is x1:y1-x2:y2"),
    ] {
        let mut command = sandbox.vaider();
        command.current_dir(sandbox.work()).args([
            "compare",
            "login.png",
            "login-error.png",
            flag,
            value,
        ]);
        let output = run(command);
        assert!(!output.status.success(), "{flag} {value} was taken");
        assert!(
            stderr(&output).contains(says),
            "{flag}: {}",
            stderr(&output)
        );
    }
}

#[test]
fn capture_from_a_simulator_is_kept_as_the_next_phase() {
    let sandbox = Sandbox::new();
    // A stub `xcrun` that "screenshots the booted simulator" by copying a known PNG.
    let bin = sandbox.root.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let png = shared_media().join("login.png");
    let stub = bin.join("xcrun");
    std::fs::write(
        &stub,
        format!(
            "#!/bin/sh\n# xcrun simctl io booted screenshot FILE\ncp '{}' \"$5\"\n",
            png.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&stub, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for (name, phase) in [("before", 1), ("after", 2)] {
        let mut command = sandbox.vaider();
        command
            .current_dir(sandbox.work())
            .env("PATH", &path)
            .args(["capture", name, "--target", "ios", "--json"]);
        let output = run(command);
        assert!(output.status.success(), "{}", stderr(&output));
        let body: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
        assert_eq!(body["data"]["phase"], phase, "{body}");
        assert_eq!(body["data"]["platform"], "ios-simulator");
        assert_eq!(body["data"]["dimensions"]["width"], 800);
    }
    let phases = sandbox.work().join(".screenshots/phases");
    assert!(phases.join("01-before.png").is_file());
    assert!(phases.join("02-after.json").is_file());
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(phases.join(".index.json")).unwrap()).unwrap();
    assert_eq!(index.as_array().unwrap().len(), 2);

    // With no adapter at all, the error names each one tried.
    let mut command = sandbox.vaider();
    command
        .current_dir(sandbox.work())
        .env("PATH", "/nonexistent")
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .args(["capture", "nothing"]);
    let output = run(command);
    assert!(!output.status.success());
    let message = stderr(&output);
    for adapter in [
        "desktop screen",
        "iOS simulator",
        "Android emulator",
        "web page",
    ] {
        assert!(
            message.contains(adapter),
            "{adapter} missing from: {message}"
        );
    }
}

/// A page with a red block, served on loopback from a thread for as long as the test runs.
fn serve_block_page() -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let body = "<html><body style='margin:0;background:#fff'><div id='block' \
                    style='position:absolute;left:30px;top:40px;width:100px;height:50px;\
                    background:#f00'></div></body></html>";
        for mut socket in listener.incoming().flatten() {
            let _ = socket.read(&mut [0u8; 4096]);
            let _ = write!(
                socket,
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    url
}

#[test]
fn capture_takes_ignore_selectors_for_web_pages_only() {
    let sandbox = Sandbox::new();
    let url = serve_block_page();
    let mut command = sandbox.vaider();
    command.current_dir(sandbox.work()).args([
        "capture",
        "shot",
        "--url",
        &url,
        "--viewport",
        "300x200",
        "--ignore-selector",
        "#block",
        "--ignore-selector",
        ".nowhere",
        "--json",
    ]);
    let output = run(command);
    assert!(output.status.success(), "{}", stderr(&output));
    let body: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(
        body["data"]["ignore_regions"],
        serde_json::json!([{"selector": "#block", "x": 30, "y": 40, "width": 100, "height": 50}]),
        "{body}"
    );
    assert_eq!(
        body["data"]["unmatched_selectors"],
        serde_json::json!([".nowhere"])
    );
    // A simulator has no CSS: refused before anything is captured.
    let mut command = sandbox.vaider();
    command.current_dir(sandbox.work()).args([
        "capture",
        "sim",
        "--target",
        "ios",
        "--ignore-selector",
        "#block",
    ]);
    let output = run(command);
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("ignore selectors are CSS selectors of a web page"),
        "{}",
        stderr(&output)
    );
}
