//! Reading a client's config file and putting Vaider's entry into it, keeping everything
//! else: JSON for most clients, TOML for Codex (edited in place, so the user's comments and
//! other tables stay as they were). A JSON file with comments (VS Code's and Zed's allow them)
//! is read, but not rewritten: rewriting would drop the comments, so `init` asks the user to
//! paste the entry instead. A file that is not its format is never touched.

use std::path::Path;

use serde_json::{json, Value};

use super::entries::servers_key;
use super::{Client, VSCODE_TOKEN_INPUT};
use crate::error::{Result, VaiderError};

/// Puts Vaider's entry from `ours` into the file (created if missing). True when an existing
/// file was merged into.
pub(super) fn merge_into(file: &Path, client: Client, ours: &Value) -> Result<bool> {
    let existing = match std::fs::read_to_string(file) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(VaiderError::internal(format!("read {}", file.display()), e)),
    };
    let text = match client {
        Client::Codex => merge_toml(file, existing.as_deref(), ours)?,
        _ => merge_json(file, client, existing.as_deref(), ours)?,
    };
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| VaiderError::internal(format!("create {}", parent.display()), e))?;
    }
    std::fs::write(file, text)
        .map_err(|e| VaiderError::internal(format!("write {}", file.display()), e))?;
    Ok(existing.is_some())
}

/// The config as the text of the client's file format.
pub(super) fn render(client: Client, config: &Value) -> String {
    match client {
        Client::Codex => {
            let mut document = toml_edit::DocumentMut::new();
            put_toml(&mut document, config);
            document.to_string()
        }
        _ => serde_json::to_string_pretty(config).unwrap_or_default() + "\n",
    }
}

/// A JSON config (comments and trailing commas allowed), or why it cannot be read.
pub(super) fn read_json(text: &str) -> std::result::Result<Value, String> {
    serde_json::from_str(text)
        .or_else(|_| serde_json::from_str(&without_comments(text)))
        .map_err(|e| e.to_string())
}

fn merge_json(file: &Path, client: Client, existing: Option<&str>, ours: &Value) -> Result<String> {
    let mut config = match existing {
        None => json!({}),
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(value) => value,
            Err(e) => {
                let why = match read_json(text) {
                    Ok(_) => format!("it has comments, which rewriting it would lose; add Vaider's entry by hand:\n{}", render(client, ours)),
                    Err(_) => format!("it is not valid JSON ({e}); fix or remove it, then run init again"),
                };
                return Err(VaiderError::InvalidRequest(format!(
                    "{} was left as it is: {why}",
                    file.display()
                )));
            }
        },
    };
    let key = servers_key(client);
    if !config.is_object() {
        config = json!({});
    }
    if !config[key].is_object() {
        config[key] = json!({});
    }
    config[key]["vaider"] = ours[key]["vaider"].clone();
    if let Some(Value::Array(our_inputs)) = ours.get("inputs") {
        if !config["inputs"].is_array() {
            config["inputs"] = json!([]);
        }
        if let Value::Array(inputs) = &mut config["inputs"] {
            inputs.retain(|input| input["id"] != VSCODE_TOKEN_INPUT);
            inputs.extend(our_inputs.iter().cloned());
        }
    }
    Ok(serde_json::to_string_pretty(&config).unwrap_or_default() + "\n")
}

fn merge_toml(file: &Path, existing: Option<&str>, ours: &Value) -> Result<String> {
    let mut document = match existing {
        None => toml_edit::DocumentMut::new(),
        Some(text) => text.parse::<toml_edit::DocumentMut>().map_err(|e| {
            VaiderError::InvalidRequest(format!(
                "{} was left as it is: it is not valid TOML ({}); fix or remove it, then run init again",
                file.display(),
                e.to_string().trim()
            ))
        })?,
    };
    put_toml(&mut document, ours);
    Ok(document.to_string())
}

/// Sets `[mcp_servers.vaider]` in `document` from `config`'s same table, replacing any older
/// Vaider entry and keeping every other server.
fn put_toml(document: &mut toml_edit::DocumentMut, config: &Value) {
    let Some(Value::Object(entry)) = config.get("mcp_servers").and_then(|s| s.get("vaider")) else {
        return;
    };
    if !document.contains_table("mcp_servers") {
        let mut servers = toml_edit::Table::new();
        servers.set_implicit(true);
        document.insert("mcp_servers", toml_edit::Item::Table(servers));
    }
    let mut table = toml_edit::Table::new();
    // The URL first, as people write it; then the rest in name order.
    let mut fields: Vec<(&String, &Value)> = entry.iter().collect();
    fields.sort_by_key(|(key, _)| (key.as_str() != "url", key.as_str()));
    for (key, value) in fields {
        if let Some(value) = toml_value(value) {
            table.insert(key, toml_edit::Item::Value(value));
        }
    }
    if let Some(servers) = document["mcp_servers"].as_table_mut() {
        servers.insert("vaider", toml_edit::Item::Table(table));
    }
}

fn toml_value(value: &Value) -> Option<toml_edit::Value> {
    Some(match value {
        Value::String(s) => s.as_str().into(),
        Value::Bool(b) => (*b).into(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.into(),
            None => n.as_f64()?.into(),
        },
        Value::Array(items) => {
            let mut array = toml_edit::Array::new();
            items
                .iter()
                .filter_map(toml_value)
                .for_each(|v| array.push(v));
            array.into()
        }
        Value::Object(fields) => {
            let mut table = toml_edit::InlineTable::new();
            for (key, value) in fields {
                table.insert(key, toml_value(value)?);
            }
            table.into()
        }
        Value::Null => return None,
    })
}

/// JSONC to JSON: `//` and `/* */` comments and trailing commas removed, strings untouched.
fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => out.extend(chars.next()),
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for c in chars.by_ref() {
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
            }
            (',', _) => {
                let rest: String = chars.clone().collect();
                let next = rest.trim_start().chars().next();
                if !matches!(next, Some('}') | Some(']')) {
                    out.push(',');
                }
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonc_comments_and_trailing_commas_are_read() {
        let text = r#"{
            // the servers
            "context_servers": { "a": { "url": "http://x//y", "n": "/*not*/" }, },
            /* more */ "b": [1, 2,],
        }"#;
        let value = read_json(text).unwrap();
        assert_eq!(value["context_servers"]["a"]["url"], "http://x//y");
        assert_eq!(value["context_servers"]["a"]["n"], "/*not*/");
        assert_eq!(value["b"], json!([1, 2]));
    }

    #[test]
    fn a_codex_config_keeps_its_comments_and_other_servers() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.toml");
        let before = "# my settings\nmodel = \"o3\" # the model\n\n[mcp_servers.other]\ncommand = \"x\"\n\n[mcp_servers.vaider]\nurl = \"http://old/mcp\"\nbearer_token = \"leaked\"\n";
        std::fs::write(&file, before).unwrap();
        let ours = super::super::Client::Codex
            .config("http://127.0.0.1:3456/mcp", super::super::TokenIn::Variable);
        assert!(merge_into(&file, Client::Codex, &ours).unwrap());
        let after = std::fs::read_to_string(&file).unwrap();
        assert!(
            after.starts_with("# my settings\nmodel = \"o3\" # the model\n"),
            "{after}"
        );
        assert!(
            after.contains("[mcp_servers.other]\ncommand = \"x\""),
            "{after}"
        );
        assert!(!after.contains("leaked"), "{after}");
        let parsed: toml::Table = after.parse().unwrap();
        let vaider = &parsed["mcp_servers"]["vaider"];
        assert_eq!(vaider["url"].as_str(), Some("http://127.0.0.1:3456/mcp"));
        assert_eq!(
            vaider["bearer_token_env_var"].as_str(),
            Some("VAIDER_TOKEN")
        );
    }

    #[test]
    fn a_json_file_with_comments_is_not_rewritten() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("settings.json");
        let before = "{\n  // keep me\n  \"theme\": \"One Dark\"\n}\n";
        std::fs::write(&file, before).unwrap();
        let ours = Client::Zed.config("http://u/mcp", super::super::TokenIn::Variable);
        let error = merge_into(&file, Client::Zed, &ours)
            .unwrap_err()
            .to_string();
        assert!(error.contains("comments"), "{error}");
        assert!(error.contains("\"context_servers\""), "{error}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), before);
    }
}
