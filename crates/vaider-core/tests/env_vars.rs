//! The one table of environment variables (vaider_base::env_vars, re-exported by vaider_core) against what users read and
//! what the code reads: docs/environment-variables.md is the table's own page, the settings
//! table of docs/configuration.md and every variable the README or docs/ name are in it, and every
//! variable the shipped crates read is in it (and nothing in it is read by nobody).
//!
//! `VAIDER_WRITE_DOCS=1` writes docs/environment-variables.md from the table instead of
//! failing on a difference.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use vaider_core::env_vars::{self, Group};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(relative: &str) -> String {
    std::fs::read_to_string(repo().join(relative))
        .unwrap_or_else(|e| panic!("read {relative}: {e}"))
}

/// Names that look like environment variables: runs of capitals, digits, `_` and `<>`, with
/// one of the prefixes Vaider's variables have, or a provider key's suffix.
fn variable_names(text: &str) -> BTreeSet<String> {
    let is_part = |c: char| c.is_ascii_uppercase() || c.is_ascii_digit() || "_<>".contains(c);
    text.split(|c: char| !is_part(c))
        .filter(|word| {
            [
                "VAIDER_",
                "GEMINI_",
                "GOOGLE_",
                "AWS_",
                "GITHUB_",
                "CODEX_",
                "PLAYWRIGHT_",
            ]
            .iter()
            .any(|prefix| word.starts_with(prefix) && word.len() > prefix.len())
                || (word.ends_with("_API_KEY") && word.len() > "_API_KEY".len())
        })
        .map(str::to_string)
        .collect()
}

#[test]
fn the_docs_page_is_the_tables_own() {
    let made = env_vars::markdown();
    let path = repo().join("docs/environment-variables.md");
    if std::env::var_os("VAIDER_WRITE_DOCS").is_some() {
        std::fs::write(&path, &made).unwrap();
    }
    let kept = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        kept == made,
        "docs/environment-variables.md differs from the table in env_vars.rs: run \
         `VAIDER_WRITE_DOCS=1 cargo test -p vaider-core --test env_vars` and commit the page"
    );
}

/// The settings table of docs/configuration.md (its `config.toml` section): each row's field
/// and the variables it names.
fn configuration_rows() -> Vec<(String, BTreeSet<String>)> {
    let page = read("docs/configuration.md");
    let section = page
        .split("\n## config.toml\n")
        .nth(1)
        .expect("docs/configuration.md has a config.toml section");
    let section = section.split("\n## ").next().unwrap_or_default();
    section
        .lines()
        .filter(|line| line.starts_with("| `"))
        .map(|line| {
            let cells: Vec<&str> = line.split(" | ").collect();
            let field = cells[0].trim_start_matches("| ").trim_matches('`');
            (field.to_string(), variable_names(cells[1]))
        })
        .collect()
}

#[test]
fn the_configuration_table_has_every_setting_and_its_variables() {
    let rows = configuration_rows();
    assert!(
        !rows.is_empty(),
        "no rows found in the settings table of docs/configuration.md"
    );
    let mut settings: BTreeSet<&str> = BTreeSet::new();
    for v in env_vars::ALL.iter().filter(|v| v.group == Group::Setting) {
        settings.insert(v.setting.unwrap());
    }
    for setting in &settings {
        let expected: BTreeSet<String> = env_vars::ALL
            .iter()
            .filter(|v| v.setting == Some(setting))
            .map(|v| v.name.to_string())
            .collect();
        let row = rows.iter().find(|(field, _)| field == setting);
        assert_eq!(
            row.map(|(_, names)| names),
            Some(&expected),
            "docs/configuration.md's row for `{setting}`"
        );
    }
    for (field, names) in &rows {
        assert!(
            names.is_empty() || settings.contains(field.as_str()),
            "docs/configuration.md names {names:?} for `{field}`, which the table does not have"
        );
    }
}

#[test]
fn every_variable_the_readme_or_docs_name_is_in_the_table() {
    let mut pages = vec!["README.md".to_string()];
    for entry in std::fs::read_dir(repo().join("docs")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".md") && name != "environment-variables.md" {
            pages.push(format!("docs/{name}"));
        }
    }
    // Variables of other programs that the docs name when they say how to set those up (the
    // Gemini CLI's own base URL, in docs/mcp.md), and of the project's own test scripts (where
    // package-test.sh finds the MCP registry's schema): Vaider does not read them.
    let others = ["GOOGLE_GEMINI_BASE_URL", "VAIDER_REGISTRY_SCHEMA"];
    for page in pages {
        for name in variable_names(&read(&page)) {
            assert!(
                env_vars::is_known(&name) || others.contains(&name.as_str()),
                "{page} names {name}, which is not in the table of crates/vaider-base/src/env_vars.rs"
            );
        }
    }
}

/// The crates that ship in `vaider` and the tray app (not the fakes or the benchmarks).
const SHIPPED: &[&str] = &[
    "crates/vaider-base/src",
    "crates/vaider-core/src",
    "crates/vaider-history/src",
    "crates/vaider-media/src",
    "crates/vaider-providers/src",
    "crates/vaider-server/src",
    "crates/vaider-cli/src",
    "crates/vaider-qa/src",
    "crates/vaider-validate/src",
    "crates/vaider-visual/src",
    "crates/vaider-browser/src",
    "crates/vaider-capture/src",
    "src-tauri/src",
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The string literals of the shipped code that name a variable, unit tests left out.
fn variables_in_code() -> BTreeSet<String> {
    let mut files = Vec::new();
    for dir in SHIPPED {
        rust_files(&repo().join(dir), &mut files);
    }
    let mut found = BTreeSet::new();
    // The table itself names them all; what counts is who reads them.
    files.retain(|f| !f.ends_with("vaider-base/src/env_vars.rs"));
    // A unit-test module kept in its own file (`mod tests;`) is not shipped code either.
    files.retain(|f| !f.ends_with("tests.rs"));
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let code = text
            .split("\n#[cfg(test)]\nmod ")
            .next()
            .unwrap_or_default();
        // A name between two quotes, wherever quotes are (a `'"'` cannot throw the count off).
        for (at, _) in code.match_indices('"') {
            let rest = &code[at + 1..];
            let end = rest.find('"').unwrap_or(0);
            let literal = &rest[..end];
            found.extend(variable_names(literal).into_iter().filter(|n| n == literal));
        }
    }
    found
}

#[test]
fn every_variable_the_code_reads_is_in_the_table_and_each_in_it_is_read() {
    let in_code = variables_in_code();
    for name in &in_code {
        assert!(
            env_vars::is_known(name),
            "the code reads {name}: add it to the table in crates/vaider-base/src/env_vars.rs"
        );
    }
    let install = read("scripts/install.sh");
    for v in env_vars::ALL.iter().filter(|v| !v.name.contains('<')) {
        // Variables without a prefix the scan looks for, read under their own names: the
        // display variables (the session's) by the capture, Zed's folders by the client setup.
        let elsewhere = [
            ("DISPLAY", "crates/vaider-capture/src/lib.rs"),
            ("WAYLAND_DISPLAY", "crates/vaider-capture/src/lib.rs"),
            ("XDG_SESSION_TYPE", "crates/vaider-capture/src/lib.rs"),
            (
                "XDG_CONFIG_HOME",
                "crates/vaider-core/src/client_setup/user_file.rs",
            ),
            (
                "APPDATA",
                "crates/vaider-core/src/client_setup/user_file.rs",
            ),
        ];
        let read_by_someone = match (v.group, elsewhere.iter().find(|(n, _)| *n == v.name)) {
            (Group::Install, _) => install.contains(v.name),
            (_, Some((_, file))) => read(file).contains(&format!("\"{}\"", v.name)),
            _ => in_code.contains(v.name),
        };
        assert!(
            read_by_someone,
            "{} is in the table but nothing reads it",
            v.name
        );
    }
}
