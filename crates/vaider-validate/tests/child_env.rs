//! What the project's Playwright receives from Vaider's environment: a stand-in Playwright
//! (`node_modules/@playwright/test/cli.js`) prints its environment, and the desktop session's
//! bus and runtime folder are not in it, while the path and the display are.

use std::path::Path;
use std::time::Duration;

use vaider_validate::runner::{run, RunPlan};

const PRINTS_ITS_ENVIRONMENT: &str = "console.log(JSON.stringify(process.env));\n";

#[tokio::test]
async fn playwright_gets_no_session_bus() {
    // Only this test sets them; nextest runs each test in its own process.
    std::env::set_var("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/1000/bus");
    std::env::set_var("XDG_RUNTIME_DIR", "/run/user/1000");
    std::env::set_var("DISPLAY", ":99");
    let project = tempfile::tempdir().unwrap();
    let cli = project.path().join("node_modules/@playwright/test");
    std::fs::create_dir_all(&cli).unwrap();
    std::fs::write(cli.join("cli.js"), PRINTS_ITS_ENVIRONMENT).unwrap();
    let test_file = project.path().join("a.spec.mjs");
    std::fs::write(&test_file, "").unwrap();
    let plan = RunPlan {
        test_file,
        project_dir: project.path().to_path_buf(),
        config: None,
        grep: None,
        run_dir: project.path().join("run"),
        timeout: Duration::from_secs(30),
        recorder: false,
    };
    let output = run(&plan).await.unwrap();
    let printed = std::fs::read_to_string(&output.stdout_log).unwrap();
    let env: serde_json::Value = serde_json::from_str(printed.trim()).unwrap();
    assert!(env.get("DBUS_SESSION_BUS_ADDRESS").is_none(), "{env}");
    assert!(env.get("XDG_RUNTIME_DIR").is_none(), "{env}");
    assert_eq!(env["DISPLAY"], ":99");
    assert!(env.get("PATH").is_some());
    assert!(Path::new(&output.stdout_log).is_file());
}
