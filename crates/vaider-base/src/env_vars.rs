//! Every environment variable Vaider reads, in one table. The config's overrides
//! (`Config::apply_env`), `vaider doctor`, the settings page and docs/environment-variables.md
//! all come from here, and a test checks the README, docs/ and the code against it
//! (`tests/env_vars.rs`): a variable added anywhere else fails that test.

/// What a variable is for, the headings of docs/environment-variables.md.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    /// Overrides a setting of `config.toml`.
    Setting,
    /// Where Vaider keeps things, and the token agents send.
    Folders,
    /// A provider's key or cloud credentials.
    Credentials,
    /// The programs and sessions Vaider uses (browser, ffmpeg, display).
    Programs,
    /// Read by `scripts/install.sh` only.
    Install,
}

impl Group {
    pub const ALL: [Group; 5] = [
        Group::Setting,
        Group::Folders,
        Group::Credentials,
        Group::Programs,
        Group::Install,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Group::Setting => "Settings (each overrides its field of config.toml)",
            Group::Folders => "Folders, token and logs",
            Group::Credentials => "Keys and credentials",
            Group::Programs => "Programs and the desktop session",
            Group::Install => "The installer (scripts/install.sh)",
        }
    }
}

/// One environment variable. A `name` with `<NAME>` or `<PROVIDER>` in it stands for a family
/// (one per provider).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EnvVar {
    pub name: &'static str,
    pub group: Group,
    /// The `config.toml` field it overrides, for [`Group::Setting`].
    pub setting: Option<&'static str>,
    /// One sentence for the docs.
    pub meaning: &'static str,
}

const fn setting(name: &'static str, field: &'static str, meaning: &'static str) -> EnvVar {
    EnvVar {
        name,
        group: Group::Setting,
        setting: Some(field),
        meaning,
    }
}

const fn var(name: &'static str, group: Group, meaning: &'static str) -> EnvVar {
    EnvVar {
        name,
        group,
        setting: None,
        meaning,
    }
}

/// The table. Order is the docs' order within each group.
#[rustfmt::skip]
pub const ALL: &[EnvVar] = &[
    setting("VAIDER_PROVIDER", "provider", "The provider that answers (gemini, openai, anthropic, zai, bedrock, or one of `[providers.NAME]`)."),
    setting("VAIDER_MODEL", "model", "The model of the chosen provider."),
    setting("VAIDER_GEMINI_MODEL", "model", "The same as VAIDER_MODEL (its older name)."),
    setting("VAIDER_PORT", "port", "The loopback port of the server."),
    setting("VAIDER_TIMEOUT_SEC", "timeout_sec", "How long one analysis may take, in seconds."),
    setting("VAIDER_MAX_CONCURRENT", "max_concurrent", "Analyses talking to the provider at once; the rest queue."),
    setting("VAIDER_CACHE", "cache", "Answer the same media, prompt and model from the history (true or false)."),
    setting("VAIDER_MAX_ATTEMPTS", "max_attempts", "Tries of a model call that failed with 429 or 5xx."),
    setting("VAIDER_MAX_CALLS_PER_MINUTE", "max_calls_per_minute", "Your own cap on model calls a minute per provider, key and model (0 or unset: none; the provider's quota is learned from its 429s)."),
    setting("VAIDER_DATA_DIR", "data_dir", "The data folder: history, token, downloads."),
    setting("VAIDER_DOWNLOAD_LIMIT_MB", "download_limit_mb", "The largest media downloaded from a URL, in MB."),
    setting("VAIDER_VIDEO_SAMPLING", "video_sampling", "How a video is shown to the model: auto, full or keyframes."),
    setting("VAIDER_GEMINI_BASE_URL", "gemini.base_url", "Where the Gemini API is."),
    setting("VAIDER_GEMINI_UPLOAD_CHUNK_MIB", "gemini.upload_chunk_mib", "The size of each upload chunk to Gemini's Files API, in MiB."),
    setting("VAIDER_GEMINI_POLL_INTERVAL_MS", "gemini.poll_interval_ms", "How often an uploaded video's processing is polled, in ms."),
    setting("VAIDER_GEMINI_RETRY_BASE_MS", "gemini.retry_base_ms", "The first backoff wait before a retry, in ms (every provider)."),
    setting("VAIDER_QA_PARALLEL_RUNS", "qa.parallel_runs", "Test-plan runs at once, each with its own browser."),
    setting("VAIDER_QA_BROWSE_MAX_ACTIONS", "qa.browse_max_actions", "Actions an agentic_browsing step may take."),
    setting("VAIDER_QA_STEP_TIMEOUT_MS", "qa.step_timeout_ms", "How long each scripted command waits for its element, in ms."),
    setting("VAIDER_MAX_MODEL_CALLS", "max_model_calls", "Model calls one request may make, at most (analyse_test_results: one per failed test)."),
    setting("VAIDER_CHILD_ENV_PASS", "child_env_pass", "Comma-separated variables passed to the programs Vaider starts, beyond the allow-list (a secret never passes)."),
    setting("VAIDER_<NAME>_BASE_URL", "[providers.NAME]", "Where provider NAME's API is (VAIDER_OPENAI_BASE_URL, VAIDER_ANTHROPIC_BASE_URL, ...)."),
    var("VAIDER_CONFIG_DIR", Group::Folders, "The folder of config.toml (and a .env file)."),
    var("VAIDER_TOKEN", Group::Folders, "The bearer token HTTP clients must send, instead of the one generated into the data folder."),
    var("VAIDER_LOG", Group::Folders, "The log level or filter (tracing's syntax, e.g. debug or vaider_core=debug)."),
    var("VAIDER_UPDATE_FEED", Group::Folders, "The release feed `vaider doctor` and the tray app check for a newer Vaider (Tauri's latest.json format); `off` checks none. Release builds have one built in, source builds none."),
    var("VAIDER_RELEASE_FEED", Group::Folders, "At build time only: the release feed built into a release (scripts/build-packages.sh and the release workflow set it)."),
    var("CODEX_HOME", Group::Folders, "Codex CLI's own folder: `vaider init --client codex --user` writes, and `vaider doctor` reads, its config.toml there instead of ~/.codex."),
    var("GEMINI_CLI_HOME", Group::Folders, "Gemini CLI's own stand-in for the home folder: `vaider init --client gemini --user` writes, and `vaider doctor` reads, its .gemini/settings.json there instead of ~/.gemini."),
    var("XDG_CONFIG_HOME", Group::Folders, "On Linux, where Zed's user settings are (`$XDG_CONFIG_HOME/zed/settings.json`, as Zed reads it) for `vaider init --client zed --user` and `vaider doctor`; else ~/.config."),
    var("APPDATA", Group::Folders, "On Windows, where Zed's user settings are (`%APPDATA%\\Zed\\settings.json`, as Zed reads it)."),
    var("GEMINI_API_KEY", Group::Credentials, "Gemini's API key (before a .env file and the keychain)."),
    var("GOOGLE_API_KEY", Group::Credentials, "The same, under Google's other name."),
    var("<PROVIDER>_API_KEY", Group::Credentials, "Another provider's key: OPENAI_API_KEY, ANTHROPIC_API_KEY, ZAI_API_KEY (or Z_AI_API_KEY), ..."),
    var("AWS_ACCESS_KEY_ID", Group::Credentials, "Bedrock: the access key, with AWS_SECRET_ACCESS_KEY (before the profile's)."),
    var("AWS_SECRET_ACCESS_KEY", Group::Credentials, "Bedrock: the secret of AWS_ACCESS_KEY_ID."),
    var("AWS_SESSION_TOKEN", Group::Credentials, "Bedrock: the session token of temporary credentials."),
    var("AWS_PROFILE", Group::Credentials, "Bedrock: the profile of the AWS files, unless `aws_profile` is configured."),
    var("AWS_DEFAULT_PROFILE", Group::Credentials, "Bedrock: the profile, when AWS_PROFILE is not set."),
    var("AWS_REGION", Group::Credentials, "Bedrock: the region, unless `region` is configured."),
    var("AWS_DEFAULT_REGION", Group::Credentials, "Bedrock: the region, when AWS_REGION is not set."),
    var("AWS_SHARED_CREDENTIALS_FILE", Group::Credentials, "Bedrock: the credentials file, else ~/.aws/credentials."),
    var("AWS_CONFIG_FILE", Group::Credentials, "Bedrock: the config file, else ~/.aws/config."),
    var("GITHUB_TOKEN", Group::Credentials, "Sent to GitHub's API when a test plan reads a repository or pull request."),
    var("VAIDER_CHROME", Group::Programs, "The Chromium or Chrome to drive, before the standard places."),
    var("VAIDER_FFMPEG", Group::Programs, "The ffmpeg for keyframes (its ffprobe beside it), else ffmpeg on PATH."),
    var("PLAYWRIGHT_BROWSERS_PATH", Group::Programs, "Where the project's Playwright keeps its browsers and video recorder (ffmpeg), as Playwright reads it: validate_test asks for video only when the recorder is there."),
    var("DISPLAY", Group::Programs, "The X11 display desktop capture shoots."),
    var("WAYLAND_DISPLAY", Group::Programs, "The Wayland display desktop capture shoots."),
    var("XDG_SESSION_TYPE", Group::Programs, "Tells a Wayland session (where other programs' windows cannot be listed)."),
    var("GITHUB_ACTIONS", Group::Programs, "true in GitHub Actions: `vaider check` prints an ::error annotation per unapproved visual change."),
    var("GITHUB_STEP_SUMMARY", Group::Programs, "GitHub Actions' job summary file: `vaider check` appends its Markdown summary."),
    var("GITHUB_SERVER_URL", Group::Programs, "Set by GitHub Actions: with GITHUB_REPOSITORY and GITHUB_RUN_ID, the address of the run `vaider check`'s job summary links to (its artifacts keep the pictures)."),
    var("GITHUB_REPOSITORY", Group::Programs, "Set by GitHub Actions (owner/name): part of the run's address in `vaider check`'s job summary."),
    var("GITHUB_RUN_ID", Group::Programs, "Set by GitHub Actions: part of the run's address in `vaider check`'s job summary."),
    var("VAIDER_DESKTOP", Group::Install, "1 builds and starts the tray app, 0 the headless server, whatever the session."),
];

/// The variables that override `config.toml`, in the order they are applied.
pub fn settings() -> impl Iterator<Item = &'static EnvVar> {
    ALL.iter()
        .filter(|v| v.setting.is_some() && !is_family(v.name))
}

/// The variables that override one `config.toml` field, in the table's order.
pub fn for_setting(field: &str) -> impl Iterator<Item = &'static str> + '_ {
    settings()
        .filter(move |v| v.setting == Some(field))
        .map(|v| v.name)
}

/// Whether `name` is in the table, itself or as one of a family (`VAIDER_OPENAI_BASE_URL` is
/// one of `VAIDER_<NAME>_BASE_URL`).
pub fn is_known(name: &str) -> bool {
    ALL.iter().any(|v| match v.name.split_once('<') {
        None => v.name == name,
        Some((before, rest)) => {
            let after = rest.split_once('>').map_or("", |(_, after)| after);
            name.len() > before.len() + after.len()
                && name.starts_with(before)
                && name.ends_with(after)
        }
    })
}

fn is_family(name: &str) -> bool {
    name.contains('<')
}

/// docs/environment-variables.md, as the table makes it.
pub fn markdown() -> String {
    let mut out = String::from(
        "# Environment variables\n\n\
         Every variable Vaider reads. This page is made from the table in\n\
         `crates/vaider-base/src/env_vars.rs`, and a test fails when the two differ (run\n\
         `VAIDER_WRITE_DOCS=1 cargo test -p vaider-core --test env_vars` to write it again).\n\
         An empty variable counts as not set.\n",
    );
    for group in Group::ALL {
        out.push_str(&format!("\n## {}\n\n", group.title()));
        if group == Group::Setting {
            out.push_str("| variable | config.toml | meaning |\n|---|---|---|\n");
        } else {
            out.push_str("| variable | meaning |\n|---|---|\n");
        }
        for v in ALL.iter().filter(|v| v.group == group) {
            match v.setting {
                Some(field) => {
                    out.push_str(&format!("| `{}` | `{field}` | {} |\n", v.name, v.meaning))
                }
                None => out.push_str(&format!("| `{}` | {} |\n", v.name, v.meaning)),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_family_member_is_known_and_a_stranger_is_not() {
        assert!(is_known("VAIDER_PORT"));
        assert!(is_known("VAIDER_OPENAI_BASE_URL"));
        assert!(is_known("OPENAI_API_KEY"));
        assert!(!is_known("VAIDER__BASE_URL"));
        assert!(!is_known("VAIDER_PORTS"));
    }

    #[test]
    fn every_setting_names_its_field_and_nothing_else_does() {
        for v in ALL {
            assert_eq!(v.setting.is_some(), v.group == Group::Setting, "{}", v.name);
        }
        assert_eq!(
            for_setting("model").collect::<Vec<_>>(),
            ["VAIDER_MODEL", "VAIDER_GEMINI_MODEL"]
        );
    }

    #[test]
    fn no_variable_is_listed_twice() {
        let mut names: Vec<&str> = ALL.iter().map(|v| v.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), ALL.len());
    }
}
