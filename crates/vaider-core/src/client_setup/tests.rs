//! `vaider init`'s files for each client, and what `doctor` reads back from them.

use std::path::Path;

use serde_json::{json, Value};

use super::*;

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn init_merges_into_an_existing_cursor_config() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".cursor")).unwrap();
    std::fs::write(
        dir.path().join(".cursor/mcp.json"),
        r#"{"mcpServers":{"other":{"command":"x"}}}"#,
    )
    .unwrap();
    let report = init(
        dir.path(),
        Client::Cursor,
        "http://127.0.0.1:3456/mcp",
        TokenIn::Literal("tok"),
    )
    .unwrap();
    assert!(report.merged);
    let config = read_json(&report.config_file);
    assert_eq!(config["mcpServers"]["other"]["command"], "x");
    assert_eq!(
        config["mcpServers"]["vaider"]["url"],
        "http://127.0.0.1:3456/mcp"
    );
    assert_eq!(
        config["mcpServers"]["vaider"]["headers"]["Authorization"],
        "Bearer tok"
    );
    assert!(std::fs::read_to_string(report.rules_file)
        .unwrap()
        .contains("Mismatch retries: at most 5"));
}

#[test]
fn each_client_gets_its_own_file_and_shape() {
    let dir = tempfile::tempdir().unwrap();
    let vscode = init(
        dir.path(),
        Client::VsCode,
        "http://u/mcp",
        TokenIn::Variable,
    )
    .unwrap();
    let config = read_json(&vscode.config_file);
    assert_eq!(config["servers"]["vaider"]["type"], "http");
    let claude = init(
        dir.path(),
        Client::ClaudeCode,
        "http://u/mcp",
        TokenIn::Variable,
    )
    .unwrap();
    assert!(claude.config_file.ends_with(".mcp.json"));
}

#[test]
fn project_configs_name_the_token_in_each_clients_own_syntax() {
    let dir = tempfile::tempdir().unwrap();
    for (client, section, header) in [
        (Client::Cursor, "mcpServers", "Bearer ${env:VAIDER_TOKEN}"),
        (Client::ClaudeCode, "mcpServers", "Bearer ${VAIDER_TOKEN}"),
        (Client::VsCode, "servers", "Bearer ${input:vaider-token}"),
    ] {
        let report = init(dir.path(), client, "http://u/mcp", TokenIn::Variable).unwrap();
        assert_eq!(report.token, TokenPlacement::Variable);
        let config = read_json(&report.config_file);
        assert_eq!(
            config[section]["vaider"]["headers"]["Authorization"], header,
            "{client:?}"
        );
    }
    // VS Code resolves `${input:vaider-token}` from a top-level input that asks once and
    // hides what is typed.
    let vscode = read_json(&dir.path().join(".vscode/mcp.json"));
    assert_eq!(
        vscode["inputs"],
        json!([{
            "type": "promptString",
            "id": "vaider-token",
            "description": "Vaider token (`vaider token` prints it)",
            "password": true,
        }])
    );
    assert!(!dir.path().join(".gitignore").exists());
}

#[test]
fn init_replaces_a_token_written_earlier_and_keeps_other_inputs() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".vscode")).unwrap();
    std::fs::write(
        dir.path().join(".vscode/mcp.json"),
        r#"{"inputs":[{"type":"promptString","id":"other-key","password":true}],
            "servers":{"other":{"command":"x"}}}"#,
    )
    .unwrap();
    init(
        dir.path(),
        Client::VsCode,
        "http://u/mcp",
        TokenIn::Literal("secret-token-1234"),
    )
    .unwrap();
    // Run twice: the second run must not add a second copy of Vaider's input.
    for _ in 0..2 {
        init(
            dir.path(),
            Client::VsCode,
            "http://u/mcp",
            TokenIn::Variable,
        )
        .unwrap();
    }
    let text = std::fs::read_to_string(dir.path().join(".vscode/mcp.json")).unwrap();
    assert!(!text.contains("secret-token-1234"), "{text}");
    let config: Value = serde_json::from_str(&text).unwrap();
    let ids: Vec<&str> = config["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|input| input["id"].as_str())
        .collect();
    assert_eq!(ids, ["other-key", "vaider-token"]);
    assert_eq!(config["servers"]["other"]["command"], "x");
}

#[test]
fn a_literal_token_puts_the_config_in_the_repositorys_gitignore_once() {
    let repo = tempfile::tempdir().unwrap();
    std::fs::create_dir(repo.path().join(".git")).unwrap();
    let project = repo.path().join("app");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(project.join(".gitignore"), "node_modules").unwrap();
    let report = init(
        &project,
        Client::ClaudeCode,
        "http://u/mcp",
        TokenIn::Literal("tok"),
    )
    .unwrap();
    let gitignore = project.join(".gitignore");
    assert_eq!(
        report.token,
        TokenPlacement::Literal(GitIgnore::Added(gitignore.clone()))
    );
    let again = init(
        &project,
        Client::ClaudeCode,
        "http://u/mcp",
        TokenIn::Literal("tok"),
    )
    .unwrap();
    assert_eq!(
        again.token,
        TokenPlacement::Literal(GitIgnore::AlreadyListed(gitignore.clone()))
    );
    let text = std::fs::read_to_string(&gitignore).unwrap();
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(lines, ["node_modules", "/.mcp.json"]);
}

#[test]
fn a_literal_token_outside_git_is_reported_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let report = init(
        dir.path(),
        Client::Cursor,
        "http://u/mcp",
        TokenIn::Literal("tok"),
    )
    .unwrap();
    assert_eq!(
        report.token,
        TokenPlacement::Literal(GitIgnore::NotARepository)
    );
    assert!(!dir.path().join(".gitignore").exists());
}

#[test]
fn a_broken_config_is_not_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".mcp.json"), "{ not json").unwrap();
    assert!(init(
        dir.path(),
        Client::ClaudeCode,
        "http://u/mcp",
        TokenIn::Variable
    )
    .is_err());
    assert_eq!(
        std::fs::read_to_string(dir.path().join(".mcp.json")).unwrap(),
        "{ not json"
    );
}

#[test]
fn the_clipboard_snippet_carries_the_token_itself() {
    // The tray copies this into a user-level config (and its desktop test checks it).
    let snippet = Client::VsCode.snippet("http://u/mcp", "tok");
    assert_eq!(
        snippet,
        json!({"servers": {"vaider": {"type": "http", "url": "http://u/mcp",
            "headers": {"Authorization": "Bearer tok"}}}})
    );
}

#[test]
fn the_new_clients_get_their_documented_shapes() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let url = "http://127.0.0.1:3456/mcp";
    let at = |scope| Place {
        project: project.path(),
        home: home.path(),
        scope,
    };
    let gemini = init_at(
        at(Scope::Project),
        Client::GeminiCli,
        url,
        TokenIn::Variable,
    )
    .unwrap();
    assert!(gemini.config_file.ends_with(".gemini/settings.json"));
    assert_eq!(
        read_json(&gemini.config_file)["mcpServers"]["vaider"],
        json!({"httpUrl": url, "headers": {"Authorization": "Bearer ${VAIDER_TOKEN}"}})
    );
    // Windsurf has only a user-level file.
    assert_eq!(Client::Windsurf.default_scope(), Scope::User);
    let windsurf = init_at(at(Scope::User), Client::Windsurf, url, TokenIn::Variable).unwrap();
    assert_eq!(
        windsurf.config_file,
        home.path().join(".codeium/windsurf/mcp_config.json")
    );
    assert_eq!(
        read_json(&windsurf.config_file)["mcpServers"]["vaider"],
        json!({"serverUrl": url, "headers": {"Authorization": "Bearer ${env:VAIDER_TOKEN}"}})
    );
    assert!(init_at(at(Scope::Project), Client::Windsurf, url, TokenIn::Variable).is_err());
    // Zed reads no variables in headers: it starts `vaider stdio`, which needs no token.
    let zed = init_at(
        at(Scope::Project),
        Client::Zed,
        &format!("{url}?tools=core"),
        TokenIn::Variable,
    )
    .unwrap();
    assert_eq!(
        read_json(&zed.config_file)["context_servers"]["vaider"],
        json!({"command": "vaider", "args": ["stdio", "--tools", "core"]})
    );
    // Codex: a TOML table naming the variable (an inline bearer_token is refused by Codex).
    let codex = init_at(at(Scope::Project), Client::Codex, url, TokenIn::Variable).unwrap();
    let table: toml::Table = std::fs::read_to_string(&codex.config_file)
        .unwrap()
        .parse()
        .unwrap();
    let vaider = &table["mcp_servers"]["vaider"];
    assert_eq!(vaider["url"].as_str(), Some(url));
    assert_eq!(
        vaider["bearer_token_env_var"].as_str(),
        Some("VAIDER_TOKEN")
    );
    assert!(vaider.get("bearer_token").is_none());
}

#[test]
fn an_inline_token_goes_where_each_client_takes_one() {
    let project = tempfile::tempdir().unwrap();
    let url = "http://127.0.0.1:3456/mcp";
    let codex = init(project.path(), Client::Codex, url, TokenIn::Literal("tok")).unwrap();
    let table: toml::Table = std::fs::read_to_string(&codex.config_file)
        .unwrap()
        .parse()
        .unwrap();
    let vaider = &table["mcp_servers"]["vaider"];
    assert_eq!(
        vaider["http_headers"]["Authorization"].as_str(),
        Some("Bearer tok")
    );
    assert!(vaider.get("bearer_token_env_var").is_none());
    let zed = init(project.path(), Client::Zed, url, TokenIn::Literal("tok")).unwrap();
    assert_eq!(
        read_json(&zed.config_file)["context_servers"]["vaider"],
        json!({"url": url, "headers": {"Authorization": "Bearer tok"}})
    );
    assert!(Client::Codex
        .snippet_text(url, TokenIn::Variable)
        .contains("[mcp_servers.vaider]\nurl = \"http://127.0.0.1:3456/mcp\""));
}
