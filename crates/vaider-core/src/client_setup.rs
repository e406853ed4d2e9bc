//! `vaider init`: writes an agent's MCP configuration (URL and token header) and the
//! VaiderRules.txt into a project, so Cursor, Claude Code or VS Code find Vaider and know when
//! to call it. The same snippets back the tray app's "Copy MCP config" menu.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::error::{Result, VaiderError};

/// The rules an agent follows when calling Vaider; shipped at the repository root.
pub const RULES: &str = include_str!("../../../VaiderRules.txt");

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    Cursor,
    ClaudeCode,
    VsCode,
}

impl Client {
    pub fn parse(name: &str) -> Option<Client> {
        match name.to_ascii_lowercase().as_str() {
            "cursor" => Some(Client::Cursor),
            "claude" | "claude-code" | "claudecode" => Some(Client::ClaudeCode),
            "vscode" | "vs-code" | "code" => Some(Client::VsCode),
            _ => None,
        }
    }

    /// Where the project-level MCP config lives, relative to the project root.
    pub fn config_path(self) -> &'static str {
        match self {
            Client::Cursor => ".cursor/mcp.json",
            Client::ClaudeCode => ".mcp.json",
            Client::VsCode => ".vscode/mcp.json",
        }
    }

    /// The config snippet for Vaider alone.
    pub fn snippet(self, url: &str, token: &str) -> Value {
        let headers = json!({"Authorization": format!("Bearer {token}")});
        match self {
            Client::Cursor => json!({"mcpServers": {"vaider": {"url": url, "headers": headers}}}),
            Client::ClaudeCode => {
                json!({"mcpServers": {"vaider": {"type": "http", "url": url, "headers": headers}}})
            }
            Client::VsCode => {
                json!({"servers": {"vaider": {"type": "http", "url": url, "headers": headers}}})
            }
        }
    }
}

/// What `init` wrote.
#[derive(Debug)]
pub struct InitReport {
    pub config_file: PathBuf,
    pub rules_file: PathBuf,
    /// True when an existing config file was merged into rather than created.
    pub merged: bool,
}

/// Writes (or merges into) the client's MCP config and writes VaiderRules.txt in `project`.
/// Other servers already in the config are kept; a config that is not JSON is left untouched.
pub fn init(project: &Path, client: Client, url: &str, token: &str) -> Result<InitReport> {
    let config_file = project.join(client.config_path());
    let snippet = client.snippet(url, token);
    let (mut config, merged) = match std::fs::read_to_string(&config_file) {
        Ok(text) => {
            let value: Value = serde_json::from_str(&text).map_err(|e| {
                VaiderError::InvalidRequest(format!(
                    "{} exists but is not valid JSON ({e}); fix or remove it, then run init again. Nothing was changed.",
                    config_file.display()
                ))
            })?;
            (value, true)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (json!({}), false),
        Err(e) => {
            return Err(VaiderError::internal(
                format!("read {}", config_file.display()),
                e,
            ))
        }
    };
    let (section, entry) = snippet
        .as_object()
        .and_then(|o| o.iter().next())
        .map(|(k, v)| (k.clone(), v["vaider"].clone()))
        .ok_or_else(|| VaiderError::internal("build the config", "empty snippet"))?;
    if !config.is_object() {
        config = json!({});
    }
    let servers = config
        .as_object_mut()
        .map(|o| o.entry(section).or_insert_with(|| json!({})))
        .ok_or_else(|| VaiderError::internal("build the config", "not an object"))?;
    if !servers.is_object() {
        *servers = json!({});
    }
    servers["vaider"] = entry;
    if let Some(parent) = config_file.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| VaiderError::internal(format!("create {}", parent.display()), e))?;
    }
    let text = serde_json::to_string_pretty(&config).unwrap_or_default() + "\n";
    std::fs::write(&config_file, text)
        .map_err(|e| VaiderError::internal(format!("write {}", config_file.display()), e))?;
    let rules_file = project.join("VaiderRules.txt");
    std::fs::write(&rules_file, RULES)
        .map_err(|e| VaiderError::internal(format!("write {}", rules_file.display()), e))?;
    Ok(InitReport {
        config_file,
        rules_file,
        merged,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
            "tok",
        )
        .unwrap();
        assert!(report.merged);
        let config: Value =
            serde_json::from_str(&std::fs::read_to_string(report.config_file).unwrap()).unwrap();
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
        let vscode = init(dir.path(), Client::VsCode, "http://u/mcp", "t").unwrap();
        let config: Value =
            serde_json::from_str(&std::fs::read_to_string(&vscode.config_file).unwrap()).unwrap();
        assert_eq!(config["servers"]["vaider"]["type"], "http");
        let claude = init(dir.path(), Client::ClaudeCode, "http://u/mcp", "t").unwrap();
        assert!(claude.config_file.ends_with(".mcp.json"));
    }

    #[test]
    fn a_broken_config_is_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".mcp.json"), "{ not json").unwrap();
        assert!(init(dir.path(), Client::ClaudeCode, "http://u/mcp", "t").is_err());
        assert_eq!(
            std::fs::read_to_string(dir.path().join(".mcp.json")).unwrap(),
            "{ not json"
        );
    }
}
