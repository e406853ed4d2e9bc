//! The API key in a real OS keychain: against the Secret Service of a D-Bus session
//! (gnome-keyring, started by scripts/test.sh). `vaider key set` stores it, `secret-tool`
//! reads it back as any other program would, an analysis uses it, `vaider key clear` removes it.
//! With VAIDER_REQUIRE_KEYCHAIN=1 (as in CI) a missing Secret Service fails the test.

mod common;

use std::process::Command;

use common::*;
use fake_gemini::FakeGemini;
use serde_json::Value;

fn secret_tool_lookup() -> Option<String> {
    let output = Command::new("secret-tool")
        .args(["lookup", "service", "vaider", "username", "gemini"])
        .output()
        .ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
}

fn keychain_reachable(sandbox: &Sandbox) -> bool {
    let mut command = sandbox.vaider_with_keychain();
    command.arg("doctor");
    stdout(&run(command)).contains("ok   keychain: available")
}

#[tokio::test]
async fn the_key_lives_in_the_secret_service_and_analyses_use_it() {
    let sandbox = Sandbox::new();
    if !keychain_reachable(&sandbox) {
        assert!(
            std::env::var("VAIDER_REQUIRE_KEYCHAIN").is_err(),
            "VAIDER_REQUIRE_KEYCHAIN is set but no Secret Service answers on this D-Bus session"
        );
        eprintln!("no Secret Service on this session: run scripts/test.sh to test the keychain");
        return;
    }
    let secret = "AIza-keychain-test-7d1e";
    let fake = FakeGemini::start().await;
    fake.set_api_key(secret);

    let mut command = sandbox.vaider_with_keychain();
    command.args(["key", "set"]);
    let output = run_with_input(command, &format!("{secret}\n"));
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(!stdout(&output).contains(secret) && !stderr(&output).contains(secret));
    // Another program sees it where the OS keeps secrets.
    assert_eq!(secret_tool_lookup().as_deref().map(str::trim), Some(secret));

    let mut command = sandbox.vaider_with_keychain();
    command.args(["key", "status"]);
    assert!(stdout(&run(command)).contains("from the OS keychain"));

    // The fake accepts only this key, so a described video proves the keychain path works.
    let video = sandbox.media("login-flow.webm");
    let mut command = sandbox.vaider_with_keychain();
    command
        .args(["analyse", "login-flow.webm", "--json"])
        .env("VAIDER_GEMINI_BASE_URL", fake.base_url());
    let output = tokio::task::spawn_blocking(move || run(command))
        .await
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let result: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert!(result["description"]
        .as_str()
        .unwrap()
        .contains(&sha256_hex(&video)));
    for name in ["request.json", "response.json"] {
        let text = std::fs::read_to_string(
            std::path::Path::new(result["logDir"].as_str().unwrap()).join(name),
        )
        .unwrap();
        assert!(!text.contains(secret), "the key is in {name}");
    }

    // Each provider has its own entry.
    let mut command = sandbox.vaider_with_keychain();
    command.args(["key", "set", "--provider", "anthropic"]);
    assert!(run_with_input(command, "sk-ant-other\n").status.success());
    let mut command = sandbox.vaider_with_keychain();
    command.args(["key", "status", "--provider", "anthropic"]);
    assert!(stdout(&run(command)).contains("from the OS keychain"));
    assert_eq!(
        secret_tool_lookup().as_deref().map(str::trim),
        Some(secret),
        "gemini's key is untouched"
    );
    let mut command = sandbox.vaider_with_keychain();
    command.args(["key", "clear", "--provider", "anthropic"]);
    assert!(run(command).status.success());

    let mut command = sandbox.vaider_with_keychain();
    command.args(["key", "clear"]);
    assert!(run(command).status.success());
    assert_eq!(secret_tool_lookup().filter(|s| !s.trim().is_empty()), None);
    let mut command = sandbox.vaider_with_keychain();
    command.args(["key", "status"]);
    assert!(!run(command).status.success());
}

/// A `.env` in whatever folder the server starts from is not the user's choice: it never wins
/// over the keychain, and is read only once the user ran `vaider init` there. `vaider doctor`
/// says where each provider's key came from. (openai's entry: the test above uses gemini's
/// and anthropic's, and both run at once on one keychain.)
#[test]
fn a_stray_dotenv_does_not_win_over_the_keychain() {
    let sandbox = Sandbox::new();
    if !keychain_reachable(&sandbox) {
        assert!(
            std::env::var("VAIDER_REQUIRE_KEYCHAIN").is_err(),
            "VAIDER_REQUIRE_KEYCHAIN is set but no Secret Service answers on this D-Bus session"
        );
        return;
    }
    let status = |sandbox: &Sandbox| {
        let mut command = sandbox.vaider_with_keychain();
        command
            .args(["key", "status", "--provider", "openai"])
            .env_remove("OPENAI_API_KEY");
        run(command)
    };
    std::fs::write(
        sandbox.work().join(".env"),
        "OPENAI_API_KEY=sk-stray-dotenv\n",
    )
    .unwrap();
    let output = status(&sandbox);
    assert!(
        !output.status.success(),
        "a stray .env supplied the key: {}",
        stdout(&output)
    );

    let mut command = sandbox.vaider_with_keychain();
    command.args(["key", "set", "--provider", "openai"]);
    assert!(run_with_input(command, "sk-from-the-keychain\n")
        .status
        .success());
    let said = stdout(&status(&sandbox));
    assert!(said.contains("from the OS keychain"), "{said}");
    let mut command = sandbox.vaider_with_keychain();
    command.arg("doctor").env_remove("OPENAI_API_KEY");
    let doctor = stdout(&run(command));
    assert!(
        doctor.contains("ok   openai key: set, from the OS keychain"),
        "{doctor}"
    );
    assert!(!doctor.contains("sk-"), "{doctor}");

    // Once the user initialises the project, its .env is theirs: used after the keychain.
    let mut command = sandbox.vaider_with_keychain();
    command.args(["key", "clear", "--provider", "openai"]);
    assert!(run(command).status.success());
    let mut command = sandbox.vaider_with_keychain();
    command
        .args(["init", "--client", "cursor"])
        .env("HOME", sandbox.home());
    let output = run(command);
    assert!(output.status.success(), "{}", stderr(&output));
    let said = stdout(&status(&sandbox));
    assert!(said.contains(".env file"), "{said}");
}
