//! The `vaider` command as a user runs it: a real process, real files, the fake Gemini on
//! loopback. The server's protocol details are tested in vaider-server; here, what a person
//! at a terminal relies on.

mod common;

use std::time::Duration;

use common::*;
use fake_gemini::FakeGemini;
use serde_json::Value;

#[test]
fn serve_refuses_a_non_loopback_address() {
    let sandbox = Sandbox::new();
    let mut command = sandbox.vaider();
    command.args(["serve", "--host", "0.0.0.0", "--port", "0"]);
    let output = run(command);
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("only listens on loopback"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_busy_port_is_explained() {
    let sandbox = Sandbox::new();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let mut command = sandbox.vaider();
    command.args(["serve", "--port", &port]);
    let output = run(command);
    assert!(!output.status.success());
    let err = stderr(&output);
    assert!(
        err.contains(&format!("Port {port}")) && err.contains("already in use"),
        "{err}"
    );
    assert!(err.contains("--port"), "{err}");
}

#[tokio::test]
async fn serve_prints_its_address_and_answers_with_its_token() {
    let sandbox = Sandbox::new();
    let served = serve(sandbox.vaider());
    let health: Value = reqwest::get(format!("{}/v1/health", served.url))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(health["status"], "ok");

    let token = stdout(&run({
        let mut c = sandbox.vaider();
        c.arg("token");
        c
    }));
    let token = token.trim();
    assert!(token.len() > 40, "{token}");
    let http = reqwest::Client::new();
    let analyse = format!("{}/v1/analyse", served.url);
    let refused = http
        .post(&analyse)
        .bearer_auth("wrong")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);
    let accepted = http
        .post(&analyse)
        .bearer_auth(token)
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(accepted.status(), 422, "the right token passes the guard");
}

#[tokio::test]
async fn analyse_in_a_terminal_then_list_the_history() {
    let fake = FakeGemini::start().await;
    let sandbox = Sandbox::new();
    let video = sandbox.media("login-flow.webm");
    let mut command = sandbox.vaider();
    command
        .args([
            "analyse",
            "login-flow.webm",
            "--json",
            "--expect",
            "a login form is shown",
        ])
        .env("GEMINI_API_KEY", FakeGemini::API_KEY)
        .env("VAIDER_GEMINI_BASE_URL", fake.base_url());
    let output = tokio::task::spawn_blocking(move || run(command))
        .await
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let result: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert!(
        result["description"]
            .as_str()
            .unwrap()
            .contains(&sha256_hex(&video)),
        "{result}"
    );
    assert_eq!(
        result["expectations"][0]["expectation"],
        "a login form is shown"
    );
    assert!(std::path::Path::new(result["logDir"].as_str().unwrap())
        .join("response.json")
        .exists());

    let mut command = sandbox.vaider();
    command.args(["history", "--json"]);
    let history: Value = serde_json::from_str(&stdout(&run(command))).unwrap();
    let row = &history["interactions"][0];
    assert_eq!(row["door"], "cli");
    assert_eq!(row["status"], "ok");
    assert_eq!(row["id"], result["interactionId"]);
    assert!(history["totals"]["costUsd"].as_f64().unwrap() > 0.0);

    let mut command = sandbox.vaider();
    command.arg("history");
    let table = stdout(&run(command));
    assert!(
        table.contains("login-flow.webm") && table.contains("ok"),
        "{table}"
    );
}

#[tokio::test]
async fn a_dotenv_file_supplies_the_key_when_there_is_no_keychain() {
    let fake = FakeGemini::start().await;
    let sandbox = Sandbox::new();
    sandbox.media("login.png");
    // The config folder's .env (one in the working folder counts only after `vaider init`).
    std::fs::write(
        sandbox.root.path().join("config/.env"),
        format!("GEMINI_API_KEY={}\n", FakeGemini::API_KEY),
    )
    .unwrap();
    let mut command = sandbox.vaider();
    command
        .args(["analyse", "login.png", "--image"])
        .env("VAIDER_GEMINI_BASE_URL", fake.base_url());
    let output = tokio::task::spawn_blocking(move || run(command))
        .await
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("media 1: image/png"),
        "{}",
        stdout(&output)
    );
    assert!(
        !stdout(&output).contains(FakeGemini::API_KEY)
            && !stderr(&output).contains(FakeGemini::API_KEY)
    );
}

#[test]
fn a_missing_key_says_how_to_set_one_and_nothing_leaves() {
    let sandbox = Sandbox::new();
    sandbox.media("login-flow.mp4");
    let mut command = sandbox.vaider();
    // A base URL where nothing listens: a request there would fail differently.
    command
        .args(["analyse", "login-flow.mp4"])
        .env("VAIDER_GEMINI_BASE_URL", "http://127.0.0.1:9");
    let output = run(command);
    assert!(!output.status.success());
    let err = stderr(&output);
    assert!(
        err.contains("NO_API_KEY") && err.contains("vaider key set"),
        "{err}"
    );
}

#[test]
fn key_set_without_a_keychain_explains_the_fallback_and_never_echoes_the_key() {
    let sandbox = Sandbox::new();
    let mut command = sandbox.vaider();
    command.args(["key", "set"]);
    let output = run_with_input(command, "AIzaSy-not-stored-123\n");
    assert!(!output.status.success());
    let err = stderr(&output);
    assert!(
        err.contains("keychain") && err.contains("GEMINI_API_KEY") && err.contains(".env"),
        "{err}"
    );
    assert!(!err.contains("AIzaSy-not-stored") && !stdout(&output).contains("AIzaSy-not-stored"));

    let mut command = sandbox.vaider();
    command.args(["key", "status"]);
    let output = run(command);
    assert!(!output.status.success());
    assert!(stdout(&output).contains("No gemini key is set"));
}

#[test]
fn doctor_says_what_is_missing_and_how_to_fix_it() {
    let sandbox = Sandbox::new();
    let mut command = sandbox.vaider();
    command.arg("doctor");
    let output = run(command);
    assert!(!output.status.success());
    let report = stdout(&output);
    assert!(
        report.contains("FIX  API key") && report.contains("vaider key set"),
        "{report}"
    );
    assert!(report.contains("keychain: not available"), "{report}");

    let mut command = sandbox.vaider();
    command
        .arg("doctor")
        .env("GEMINI_API_KEY", "AIza-doctor-secret");
    let output = run(command);
    let report = stdout(&output);
    assert!(
        report.contains("ok   API key: set, from the environment variable GEMINI_API_KEY"),
        "{report}"
    );
    assert!(!report.contains("AIza-doctor-secret"));
}

/// Doctor only looks: it reports the provider and the key as the engine sees them, yet opens
/// no engine, so an empty data folder gets no history database.
#[test]
fn doctor_reads_the_status_without_creating_the_history() {
    let sandbox = Sandbox::new();
    let mut command = sandbox.vaider();
    command
        .arg("doctor")
        .env("GEMINI_API_KEY", "AIza-doctor-secret");
    let report = stdout(&run(command));
    assert!(
        report.contains("ok   provider: gemini · model gemini-"),
        "{report}"
    );
    assert!(
        report.contains("ok   API key: set, from the environment variable GEMINI_API_KEY"),
        "{report}"
    );
    let history: Vec<String> = std::fs::read_dir(sandbox.data())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("history"))
        .collect();
    assert!(history.is_empty(), "doctor created {history:?}");
}

#[test]
fn doctor_checks_that_each_configured_agent_reaches_the_server() {
    let sandbox = Sandbox::new();
    let served = serve(sandbox.vaider());
    let port = served
        .url
        .rsplit(':')
        .next()
        .unwrap()
        .trim_end_matches('/')
        .to_string();
    let mut command = sandbox.vaider();
    command.arg("token");
    let token = stdout(&run(command)).trim().to_string();
    // Gemini CLI in the project, Codex in the user's home, Zed starting `vaider stdio`.
    for args in [
        &["init", "--client", "gemini"][..],
        &["init", "--client", "codex", "--user"],
        &["init", "--client", "zed", "--tools", "core"],
    ] {
        let mut command = sandbox.vaider();
        command.args(args).env("VAIDER_PORT", &port);
        let output = run(command);
        assert!(output.status.success(), "{args:?}: {}", stderr(&output));
    }
    assert!(sandbox.home().join(".codex/config.toml").exists());
    let bin_dir = std::path::Path::new(env!("CARGO_BIN_EXE_vaider"))
        .parent()
        .unwrap();
    let doctor = |token: Option<&str>| {
        let mut command = sandbox.vaider();
        command
            .arg("doctor")
            .env("VAIDER_PORT", &port)
            .env("PATH", bin_dir);
        if let Some(token) = token {
            command.env("VAIDER_TOKEN", token);
        }
        stdout(&run(command))
    };
    let mcp = format!("http://127.0.0.1:{port}/mcp");

    // The agents read VAIDER_TOKEN; without it here, doctor says what to export.
    let report = doctor(None);
    let gemini = line_of(&report, "Gemini CLI");
    assert!(
        gemini.starts_with("FIX") && gemini.contains("VAIDER_TOKEN is not set"),
        "{report}"
    );
    assert!(line_of(&report, "Zed").starts_with("ok"), "{report}");

    let report = doctor(Some(&token));
    for agent in ["Gemini CLI", "Codex CLI"] {
        let line = line_of(&report, agent);
        assert!(
            line.starts_with("ok") && line.contains(&format!("{mcp} answers")),
            "{report}"
        );
    }
    assert!(!report.contains(&token), "{report}");

    // With another token here, the server cannot prove it holds ours: it is sent nothing.
    let report = doctor(Some("not-the-token"));
    let codex = line_of(&report, "Codex CLI");
    assert!(
        codex.starts_with("FIX")
            && codex.contains("not by a Vaider that holds your token")
            && codex.contains("(the token was not sent)"),
        "{report}"
    );
    assert!(!report.contains("not-the-token"), "{report}");

    drop(served);
    let report = doctor(Some(&token));
    assert!(
        line_of(&report, "Gemini CLI").contains("nothing answers"),
        "{report}"
    );
}

#[test]
fn user_configs_go_where_each_agent_looks_codex_home_gemini_cli_home_xdg_config_home() {
    let sandbox = Sandbox::new();
    let codex_home = sandbox.root.path().join("codex-home");
    let gemini_home = sandbox.root.path().join("gemini-home");
    let xdg_config = sandbox.root.path().join("xdg-config");
    let with_homes = |args: &[&str]| {
        let mut command = sandbox.vaider();
        command
            .args(args)
            .env("CODEX_HOME", &codex_home)
            .env("GEMINI_CLI_HOME", &gemini_home)
            .env("XDG_CONFIG_HOME", &xdg_config);
        command
    };
    for client in ["codex", "gemini", "zed"] {
        let output = run(with_homes(&["init", "--client", client, "--user"]));
        assert!(output.status.success(), "{client}: {}", stderr(&output));
    }
    let codex = codex_home.join("config.toml");
    let gemini = gemini_home.join(".gemini/settings.json");
    let written = std::fs::read_to_string(&codex).unwrap();
    assert!(
        written.contains("[mcp_servers.vaider]")
            && written.contains("bearer_token_env_var = \"VAIDER_TOKEN\""),
        "{written}"
    );
    assert!(std::fs::read_to_string(&gemini)
        .unwrap()
        .contains("\"httpUrl\""));
    // Zed on Linux reads $XDG_CONFIG_HOME/zed/settings.json (elsewhere: see user_file.rs).
    let zed = match cfg!(target_os = "linux") {
        true => xdg_config.join("zed/settings.json"),
        false => sandbox.home().join(".config/zed/settings.json"),
    };
    assert!(std::fs::read_to_string(&zed)
        .unwrap()
        .contains("\"context_servers\""));
    // Nothing went to the home folder's defaults, which these agents would not read.
    assert!(!sandbox.home().join(".codex").exists());
    assert!(!sandbox.home().join(".gemini").exists());

    // doctor looks where the agents look.
    let report = stdout(&run(with_homes(&["doctor"])));
    for (agent, file) in [
        ("Codex CLI", &codex),
        ("Gemini CLI", &gemini),
        ("Zed", &zed),
    ] {
        assert!(
            line_of(&report, agent).contains(&file.display().to_string()),
            "{report}"
        );
    }
}

/// The line of a `vaider doctor` report about `what`.
fn line_of<'a>(report: &'a str, what: &str) -> &'a str {
    report
        .lines()
        .find(|line| line.contains(what))
        .unwrap_or_default()
}

#[test]
fn init_inline_token_writes_the_clients_mcp_config_with_the_token() {
    let sandbox = Sandbox::new();
    let mut command = sandbox.vaider();
    command.arg("token");
    let token = stdout(&run(command)).trim().to_string();
    for (client, file, section) in [
        ("cursor", ".cursor/mcp.json", "mcpServers"),
        ("claude", ".mcp.json", "mcpServers"),
        ("vscode", ".vscode/mcp.json", "servers"),
    ] {
        let mut command = sandbox.vaider();
        command
            .args(["init", "--client", client, "--inline-token"])
            .env("VAIDER_PORT", "4567");
        let output = run(command);
        assert!(output.status.success(), "{}", stderr(&output));
        let config: Value =
            serde_json::from_slice(&std::fs::read(sandbox.work().join(file)).unwrap()).unwrap();
        let entry = &config[section]["vaider"];
        assert_eq!(entry["url"], "http://127.0.0.1:4567/mcp", "{client}");
        assert_eq!(entry["headers"]["Authorization"], format!("Bearer {token}"));
        // The sandbox is not a git repository: the user is told to keep the file out.
        assert!(
            stdout(&output).contains("not a git repository"),
            "{}",
            stdout(&output)
        );
    }
    let rules = std::fs::read_to_string(sandbox.work().join("VaiderRules.txt")).unwrap();
    assert!(rules.contains("Mismatch retries: at most 5") && rules.contains("analyze_video"));

    let mut command = sandbox.vaider();
    command.args(["init", "--client", "emacs"]);
    let output = run(command);
    assert!(!output.status.success());
    assert!(stderr(&output).contains("cursor, claude, vscode, codex, gemini, windsurf or zed"));
}

/// `git` in the sandbox's work folder, with no user config or hooks of the machine's.
fn git(sandbox: &Sandbox, args: &[&str]) -> std::process::Output {
    std::process::Command::new("git")
        .args(args)
        .current_dir(sandbox.work())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .expect("git")
}

#[test]
fn init_in_a_git_repository_leaves_nothing_secret_to_commit() {
    let sandbox = Sandbox::new();
    assert!(git(&sandbox, &["init", "-q"]).status.success());
    let mut command = sandbox.vaider();
    command.arg("token");
    let token = stdout(&run(command)).trim().to_string();

    // By default the configs name the token; `git add` would commit no secret.
    for (client, file, told) in [
        (
            "cursor",
            ".cursor/mcp.json",
            "export VAIDER_TOKEN=\"$(vaider token)\"",
        ),
        (
            "claude",
            ".mcp.json",
            "export VAIDER_TOKEN=\"$(vaider token)\"",
        ),
        ("vscode", ".vscode/mcp.json", "VS Code asks for it"),
        (
            "codex",
            ".codex/config.toml",
            "export VAIDER_TOKEN=\"$(vaider token)\"",
        ),
        (
            "gemini",
            ".gemini/settings.json",
            "export VAIDER_TOKEN=\"$(vaider token)\"",
        ),
        (
            "zed",
            ".zed/settings.json",
            "Zed starts `vaider stdio` itself",
        ),
    ] {
        let mut command = sandbox.vaider();
        command.args(["init", "--client", client]);
        let output = run(command);
        assert!(output.status.success(), "{}", stderr(&output));
        let said = stdout(&output);
        assert!(said.contains(told), "{client}: {said}");
        assert!(!said.contains(&token), "{client}: {said}");
        let text = std::fs::read_to_string(sandbox.work().join(file)).unwrap();
        assert!(!text.contains(&token), "{client}: {text}");
        assert!(
            text.contains("VAIDER_TOKEN")
                || text.contains("${input:vaider-token}")
                || text.contains("\"stdio\""),
            "{client}: {text}"
        );
    }
    assert!(!sandbox.work().join(".gitignore").exists());
    let status = stdout(&git(&sandbox, &["status", "--porcelain", "-uall"]));
    assert!(status.contains(".mcp.json"), "{status}");

    // With --inline-token, the file with the token is ignored by git itself.
    let mut command = sandbox.vaider();
    command.args(["init", "--client", "claude", "--inline-token"]);
    let output = run(command);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("was added to") && stdout(&output).contains(".gitignore"),
        "{}",
        stdout(&output)
    );
    let text = std::fs::read_to_string(sandbox.work().join(".mcp.json")).unwrap();
    assert!(text.contains(&token));
    let ignored = git(&sandbox, &["check-ignore", "-q", ".mcp.json"]);
    assert!(ignored.status.success(), "git does not ignore .mcp.json");
    let status = stdout(&git(&sandbox, &["status", "--porcelain", "-uall"]));
    assert!(!status.contains(".mcp.json"), "{status}");
    assert!(status.contains(".cursor/mcp.json"), "{status}");
}

#[tokio::test]
async fn stdio_mode_serves_the_same_tools() {
    use rmcp::model::CallToolRequestParams;
    use rmcp::transport::TokioChildProcess;
    use rmcp::ServiceExt;

    let fake = FakeGemini::start().await;
    let sandbox = Sandbox::new();
    let video = sandbox.media("login-flow.mp4");
    let mut command = tokio::process::Command::from(sandbox.vaider());
    command
        .arg("stdio")
        .env("GEMINI_API_KEY", FakeGemini::API_KEY)
        .env("VAIDER_GEMINI_BASE_URL", fake.base_url());
    let client = ().serve(TokioChildProcess::new(command).unwrap()).await.unwrap();
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "analyze_video"));
    let result = tokio::time::timeout(
        Duration::from_secs(30),
        client.call_tool(
            CallToolRequestParams::new("analyze_video").with_arguments(
                serde_json::json!({"video_source": video})
                    .as_object()
                    .cloned()
                    .unwrap(),
            ),
        ),
    )
    .await
    .unwrap()
    .unwrap();
    let structured = result.structured_content.expect("structuredContent");
    assert!(structured["description"]
        .as_str()
        .unwrap()
        .contains(&sha256_hex(&video)));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn even_trace_logs_carry_no_key_and_no_upload_url() {
    let fake = FakeGemini::start().await;
    let sandbox = Sandbox::new();
    sandbox.media("login-flow.webm");
    let mut command = sandbox.vaider();
    command
        .args(["analyse", "login-flow.webm"])
        .env("GEMINI_API_KEY", FakeGemini::API_KEY)
        .env("VAIDER_GEMINI_BASE_URL", fake.base_url())
        .env("VAIDER_LOG", "trace");
    let output = tokio::task::spawn_blocking(move || run(command))
        .await
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let logs = stderr(&output);
    assert!(
        logs.contains("analysis started"),
        "trace logging was on: {logs}"
    );
    assert!(
        !logs.contains(FakeGemini::API_KEY),
        "the key is in the logs"
    );
    assert!(
        !logs.contains("upload_id"),
        "the upload session URL is in the logs"
    );
}

#[tokio::test]
async fn another_provider_from_the_terminal_with_its_own_key() {
    let fake = fake_vision::FakeOpenAi::start().await;
    let sandbox = Sandbox::new();
    let image = sandbox.media("dashboard.png");
    let mut command = sandbox.vaider();
    // A local image is recognised as one; the key comes from OPENAI_API_KEY.
    command
        .args(["analyse", "dashboard.png", "--provider", "openai", "--json"])
        .env("OPENAI_API_KEY", fake_vision::FakeOpenAi::API_KEY)
        .env("VAIDER_OPENAI_BASE_URL", fake.base_url());
    let output = tokio::task::spawn_blocking(move || run(command))
        .await
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let result: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(result["provider"], "openai");
    assert!(result["description"]
        .as_str()
        .unwrap()
        .contains(&sha256_hex(&image)));

    let mut command = sandbox.vaider();
    command.args(["key", "status", "--provider", "nope"]);
    let output = run(command);
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("Unknown provider"),
        "{}",
        stderr(&output)
    );
}

/// The sign-in link `vaider ui --no-open` prints: the first line that holds one.
fn sign_in_link(lines: &mut impl Iterator<Item = std::io::Result<String>>) -> String {
    lines
        .map(|l| l.unwrap())
        .find_map(|l| {
            l.strip_prefix("Open this link within a minute (it works once): ")
                .map(str::to_string)
        })
        .expect("a sign-in link")
}

/// `POST /api/login` with `code`: the status.
async fn login(base: &str, code: &str) -> u16 {
    reqwest::Client::new()
        .post(format!("{base}/api/login"))
        .json(&serde_json::json!({ "code": code }))
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test]
async fn vaider_ui_serves_the_history_and_prints_a_one_time_code_never_the_token() {
    use std::io::BufRead;
    let sandbox = Sandbox::new();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
        .to_string();
    // No server runs yet: `vaider ui` starts one here.
    let mut first = sandbox.vaider();
    first
        .args(["ui", "--no-open"])
        .env("VAIDER_PORT", &port)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    let child = first.spawn().unwrap();
    let mut served = Served {
        url: String::new(),
        child,
    };
    let mut lines = std::io::BufReader::new(served.child.stdout.take().unwrap()).lines();
    let link = sign_in_link(&mut lines);
    let (base, code) = link
        .split_once("/#/?code=")
        .expect("a code in the fragment");
    assert_eq!(base, format!("http://127.0.0.1:{port}"));
    let token = stdout(&run({
        let mut c = sandbox.vaider();
        c.arg("token");
        c
    }));
    assert!(!link.contains(token.trim()), "{link}");

    let client = reqwest::Client::new();
    let page = client.get(format!("{base}/")).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert!(page.text().await.unwrap().contains("/ui/app.js"));
    assert_eq!(login(base, code).await, 200);
    assert_eq!(login(base, code).await, 401, "a code works once");

    // With a server running, `vaider ui` proves it, asks it for a fresh code and returns.
    let mut second = sandbox.vaider();
    second.args(["ui", "--no-open"]).env("VAIDER_PORT", &port);
    let output = run(second);
    assert!(output.status.success(), "{}", stderr(&output));
    let again = sign_in_link(&mut stdout(&output).lines().map(|l| Ok(l.to_string())));
    assert_ne!(again, link);
    assert!(!again.contains(token.trim()));
    let (_, code) = again.split_once("/#/?code=").unwrap();
    assert_eq!(login(base, code).await, 200);
}

/// Serves one release feed document (Tauri's latest.json) on loopback, from a thread; returns
/// its URL.
fn release_feed(version: &str) -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/latest.json", listener.local_addr().unwrap());
    let body = format!(r#"{{"version": "{version}", "notes": "n", "platforms": {{}}}}"#);
    std::thread::spawn(move || {
        for mut socket in listener.incoming().flatten() {
            let mut request = [0u8; 4096];
            let _ = socket.read(&mut request);
            let answer = format!(
                "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = socket.write_all(answer.as_bytes());
        }
    });
    url
}

/// Doctor says where this Vaider came from (a test build: a source build) and what the
/// release feed knows: a newer version with how to get it, or that it is up to date.
#[test]
fn doctor_says_where_vaider_came_from_and_whether_a_newer_one_is_known() {
    let sandbox = Sandbox::new();
    let doctor = |feed: &str| {
        let mut command = sandbox.vaider();
        command.arg("doctor").env("VAIDER_UPDATE_FEED", feed);
        stdout(&run(command))
    };
    let report = doctor("off");
    assert!(report.contains("from a source build"), "{report}");
    assert!(
        report.contains("this build checks no release feed") && report.contains("git pull"),
        "{report}"
    );
    let report = doctor(&release_feed("99.0.0"));
    assert!(
        report.contains("updates: Vaider 99.0.0 is available"),
        "{report}"
    );
    let report = doctor(&release_feed(env!("CARGO_PKG_VERSION")));
    assert!(report.contains("updates: up to date"), "{report}");
}
