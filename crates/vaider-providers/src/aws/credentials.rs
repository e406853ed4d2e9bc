//! Where AWS credentials and the region come from, in the order the AWS CLI and SDKs use:
//! the environment (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`), then
//! the profile (`AWS_PROFILE`, else `default`) in the shared credentials file and the config
//! file (`[name]` in credentials, `[profile name]` in config). The region comes from
//! `AWS_REGION`, `AWS_DEFAULT_REGION`, then the profile's `region`. The environment is passed
//! in as a lookup so tests need not touch the process's own.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use vaider_base::error::VaiderError;
use vaider_base::secrets::ApiKey;

/// An access key pair, and a session token for temporary credentials. The secret and the
/// token never print: Debug shows only the key id and where it came from.
#[derive(Clone)]
pub struct AwsCredentials {
    pub access_key_id: String,
    secret_access_key: ApiKey,
    session_token: Option<ApiKey>,
    /// Where they were found, for messages ("the environment", "profile default in ...").
    pub source: String,
}

impl AwsCredentials {
    pub fn new(
        access_key_id: &str,
        secret_access_key: &str,
        session_token: Option<&str>,
        source: impl Into<String>,
    ) -> Self {
        AwsCredentials {
            access_key_id: access_key_id.trim().to_string(),
            secret_access_key: ApiKey::new(secret_access_key),
            session_token: session_token
                .map(ApiKey::new)
                .filter(|t| !t.expose().is_empty()),
            source: source.into(),
        }
    }

    pub fn secret_access_key(&self) -> &str {
        self.secret_access_key.expose()
    }

    pub fn session_token(&self) -> Option<&str> {
        self.session_token.as_ref().map(ApiKey::expose)
    }
}

impl fmt::Debug for AwsCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AwsCredentials")
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &"***")
            .field("session_token", &self.session_token.as_ref().map(|_| "***"))
            .field("source", &self.source)
            .finish()
    }
}

/// What a call to AWS needs: who signs and where.
#[derive(Debug, Clone)]
pub struct AwsSetup {
    pub credentials: AwsCredentials,
    pub region: String,
}

/// Choices from Vaider's own config, which win over the environment.
#[derive(Debug, Clone, Default)]
pub struct AwsChoice {
    pub profile: Option<String>,
    pub region: Option<String>,
}

/// Finds credentials and region; `env` is the environment. The error names every place it
/// looked and how to fill one.
pub fn resolve(
    env: &dyn Fn(&str) -> Option<String>,
    choice: &AwsChoice,
) -> Result<AwsSetup, VaiderError> {
    let get = |name: &str| {
        env(name)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let profile = choice
        .profile
        .clone()
        .filter(|p| !p.trim().is_empty())
        .or_else(|| get("AWS_PROFILE"))
        .or_else(|| get("AWS_DEFAULT_PROFILE"))
        .unwrap_or_else(|| "default".to_string());
    let files = ProfileFiles::read(&get, &profile);
    // A profile chosen in Vaider's config is meant; otherwise keys in the environment come
    // first, as with the AWS CLI.
    let from_env = match (
        &choice.profile,
        get("AWS_ACCESS_KEY_ID"),
        get("AWS_SECRET_ACCESS_KEY"),
    ) {
        (None, Some(id), Some(secret)) => Some(AwsCredentials::new(
            &id,
            &secret,
            get("AWS_SESSION_TOKEN").as_deref(),
            "the environment (AWS_ACCESS_KEY_ID)",
        )),
        _ => None,
    };
    let credentials = match from_env {
        Some(found) => found,
        None => files.credentials(&get)?,
    };
    let region = choice
        .region
        .clone()
        .filter(|r| !r.trim().is_empty())
        .or_else(|| get("AWS_REGION"))
        .or_else(|| get("AWS_DEFAULT_REGION"))
        .or_else(|| files.value("region"))
        .ok_or_else(|| {
            VaiderError::InvalidRequest(format!(
                "No AWS region for Bedrock. Set AWS_REGION (e.g. us-east-1), `region` under [providers.bedrock] in Vaider's config, or `region` in profile {profile:?} of {}.",
                files.config_path.display()
            ))
        })?;
    Ok(AwsSetup {
        credentials,
        region,
    })
}

/// One profile's values from the shared credentials file and the config file.
struct ProfileFiles {
    profile: String,
    credentials_path: PathBuf,
    config_path: PathBuf,
    /// From the credentials file, which wins over the config file for the same key.
    from_credentials: Option<BTreeMap<String, String>>,
    from_config: Option<BTreeMap<String, String>>,
}

impl ProfileFiles {
    fn read(get: &dyn Fn(&str) -> Option<String>, profile: &str) -> ProfileFiles {
        let home = get("HOME")
            .or_else(|| get("USERPROFILE"))
            .map(PathBuf::from)
            .unwrap_or_default();
        let credentials_path = get("AWS_SHARED_CREDENTIALS_FILE")
            .map(PathBuf::from)
            .unwrap_or_else(|| home.join(".aws").join("credentials"));
        let config_path = get("AWS_CONFIG_FILE")
            .map(PathBuf::from)
            .unwrap_or_else(|| home.join(".aws").join("config"));
        let config_section = if profile == "default" {
            "default".to_string()
        } else {
            format!("profile {profile}")
        };
        let section = |path: &PathBuf, name: &str| {
            std::fs::read_to_string(path)
                .ok()
                .and_then(|text| ini_section(&text, name))
        };
        ProfileFiles {
            profile: profile.to_string(),
            from_credentials: section(&credentials_path, profile),
            from_config: section(&config_path, &config_section)
                // The CLI also takes `[default]` written as `[profile default]`.
                .or_else(|| {
                    (profile == "default")
                        .then(|| section(&config_path, "profile default"))
                        .flatten()
                }),
            credentials_path,
            config_path,
        }
    }

    fn value(&self, key: &str) -> Option<String> {
        [&self.from_credentials, &self.from_config]
            .into_iter()
            .flatten()
            .find_map(|s| s.get(key).cloned())
            .filter(|v| !v.is_empty())
    }

    fn credentials(
        &self,
        get: &dyn Fn(&str) -> Option<String>,
    ) -> Result<AwsCredentials, VaiderError> {
        let source = if self
            .from_credentials
            .as_ref()
            .is_some_and(|s| s.contains_key("aws_access_key_id"))
        {
            format!(
                "profile {} in {}",
                self.profile,
                self.credentials_path.display()
            )
        } else {
            format!("profile {} in {}", self.profile, self.config_path.display())
        };
        if let (Some(id), Some(secret)) = (
            self.value("aws_access_key_id"),
            self.value("aws_secret_access_key"),
        ) {
            return Ok(AwsCredentials::new(
                &id,
                &secret,
                self.value("aws_session_token").as_deref(),
                source,
            ));
        }
        Err(self.missing(get))
    }

    /// No keys: say where Vaider looked, and what the profile asks for that it cannot do.
    fn missing(&self, get: &dyn Fn(&str) -> Option<String>) -> VaiderError {
        let found = |s: &Option<BTreeMap<String, String>>| {
            if s.is_some() {
                "no keys in it"
            } else {
                "not found"
            }
        };
        let unsupported = [
            "sso_session",
            "sso_start_url",
            "role_arn",
            "credential_process",
            "web_identity_token_file",
        ]
        .into_iter()
        .find(|k| self.value(k).is_some());
        let hint = match unsupported {
            Some(kind) => format!(
                " Profile {:?} uses `{kind}`, which Vaider does not run itself: export temporary keys with `aws configure export-credentials --profile {} --format env` and start Vaider with them.",
                self.profile, self.profile
            ),
            None => " Set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary keys), or run `aws configure` to write them to the credentials file.".to_string(),
        };
        let env_state = if get("AWS_ACCESS_KEY_ID").is_some() {
            "AWS_ACCESS_KEY_ID set but AWS_SECRET_ACCESS_KEY missing"
        } else {
            "AWS_ACCESS_KEY_ID not set"
        };
        VaiderError::Upstream {
            message: format!(
                "No AWS credentials for Bedrock. Looked in: the environment ({env_state}); profile {:?} in {} ({}); profile {:?} in {} ({}).{hint}",
                self.profile,
                self.credentials_path.display(),
                found(&self.from_credentials),
                self.profile,
                self.config_path.display(),
                found(&self.from_config),
            ),
            response: None,
        }
    }
}

/// The `key = value` pairs of `[name]` in an INI file as the AWS tools write it; `#` and `;`
/// start comments, and indented lines (nested settings such as `s3 =`) are skipped.
fn ini_section(text: &str, name: &str) -> Option<BTreeMap<String, String>> {
    let mut current: Option<String> = None;
    let mut found: Option<BTreeMap<String, String>> = None;
    for line in text.lines() {
        if line.starts_with([' ', '\t']) {
            continue;
        }
        let line = line.trim();
        if line.is_empty() || line.starts_with(['#', ';']) {
            continue;
        }
        if let Some(header) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            let header = header.split_whitespace().collect::<Vec<_>>().join(" ");
            current = Some(header);
            if current.as_deref() == Some(name) && found.is_none() {
                found = Some(BTreeMap::new());
            }
            continue;
        }
        if current.as_deref() != Some(name) {
            continue;
        }
        if let (Some(section), Some((key, value))) = (found.as_mut(), line.split_once('=')) {
            section.insert(key.trim().to_ascii_lowercase(), value.trim().to_string());
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| map.get(name).cloned()
    }

    /// A temporary HOME with `~/.aws/credentials` and `~/.aws/config`.
    fn home(credentials: &str, config: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".aws")).unwrap();
        std::fs::write(dir.path().join(".aws/credentials"), credentials).unwrap();
        std::fs::write(dir.path().join(".aws/config"), config).unwrap();
        dir
    }

    const CREDENTIALS: &str = "[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key = secret-default\n\n[work]\naws_access_key_id=AKIDWORK\naws_secret_access_key=secret-work\naws_session_token = token-work\n";
    const CONFIG: &str = "[default]\nregion = eu-west-1\n\n[profile work]\nregion = us-west-2\ns3 =\n  max_concurrent_requests = 20\n# a comment\n";

    #[test]
    fn the_environment_wins_over_the_files() {
        let home = home(CREDENTIALS, CONFIG);
        let h = home.path().to_str().unwrap();
        let setup = resolve(
            &env(&[
                ("HOME", h),
                ("AWS_ACCESS_KEY_ID", "AKIDENV"),
                ("AWS_SECRET_ACCESS_KEY", "secret-env"),
                ("AWS_SESSION_TOKEN", "token-env"),
                ("AWS_REGION", "ap-south-1"),
                ("AWS_DEFAULT_REGION", "eu-central-1"),
            ]),
            &AwsChoice::default(),
        )
        .unwrap();
        assert_eq!(setup.credentials.access_key_id, "AKIDENV");
        assert_eq!(setup.credentials.secret_access_key(), "secret-env");
        assert_eq!(setup.credentials.session_token(), Some("token-env"));
        assert_eq!(setup.region, "ap-south-1");
        assert!(setup.credentials.source.contains("environment"));
    }

    #[test]
    fn the_default_profile_and_its_region_come_from_the_files() {
        let home = home(CREDENTIALS, CONFIG);
        let h = home.path().to_str().unwrap();
        let setup = resolve(&env(&[("HOME", h)]), &AwsChoice::default()).unwrap();
        assert_eq!(setup.credentials.access_key_id, "AKIDDEFAULT");
        assert_eq!(setup.credentials.session_token(), None);
        assert_eq!(setup.region, "eu-west-1");
        // AWS_DEFAULT_REGION wins over the profile's region.
        let setup = resolve(
            &env(&[("HOME", h), ("AWS_DEFAULT_REGION", "eu-central-1")]),
            &AwsChoice::default(),
        )
        .unwrap();
        assert_eq!(setup.region, "eu-central-1");
    }

    #[test]
    fn aws_profile_selects_credentials_and_profile_x_in_config() {
        let home = home(CREDENTIALS, CONFIG);
        let h = home.path().to_str().unwrap();
        let setup = resolve(
            &env(&[("HOME", h), ("AWS_PROFILE", "work")]),
            &AwsChoice::default(),
        )
        .unwrap();
        assert_eq!(setup.credentials.access_key_id, "AKIDWORK");
        assert_eq!(setup.credentials.session_token(), Some("token-work"));
        // `[profile work]` in config, not `[work]`; the nested `s3` block is skipped.
        assert_eq!(setup.region, "us-west-2");
        assert!(setup.credentials.source.contains("profile work"));
    }

    #[test]
    fn a_profile_in_vaiders_config_wins_over_environment_keys() {
        let home = home(CREDENTIALS, CONFIG);
        let h = home.path().to_str().unwrap();
        let choice = AwsChoice {
            profile: Some("work".into()),
            region: Some("us-east-1".into()),
        };
        let setup = resolve(
            &env(&[
                ("HOME", h),
                ("AWS_ACCESS_KEY_ID", "AKIDENV"),
                ("AWS_SECRET_ACCESS_KEY", "secret-env"),
            ]),
            &choice,
        )
        .unwrap();
        assert_eq!(setup.credentials.access_key_id, "AKIDWORK");
        assert_eq!(setup.region, "us-east-1");
    }

    #[test]
    fn files_named_by_the_environment_are_read_instead_of_home() {
        let dir = tempfile::tempdir().unwrap();
        let (creds, config) = (dir.path().join("c"), dir.path().join("k"));
        std::fs::write(
            &creds,
            "[ci]\naws_access_key_id = AKIDCI\naws_secret_access_key = s\n",
        )
        .unwrap();
        std::fs::write(&config, "[profile ci]\nregion = sa-east-1\n").unwrap();
        let setup = resolve(
            &env(&[
                ("HOME", "/nonexistent"),
                ("AWS_SHARED_CREDENTIALS_FILE", creds.to_str().unwrap()),
                ("AWS_CONFIG_FILE", config.to_str().unwrap()),
                ("AWS_PROFILE", "ci"),
            ]),
            &AwsChoice::default(),
        )
        .unwrap();
        assert_eq!(setup.credentials.access_key_id, "AKIDCI");
        assert_eq!(setup.region, "sa-east-1");
    }

    #[test]
    fn keys_in_the_config_file_are_used_too() {
        let home = home("", "[profile cfg]\naws_access_key_id = AKIDCFG\naws_secret_access_key = s\nregion = us-east-2\n");
        let h = home.path().to_str().unwrap();
        let setup = resolve(
            &env(&[("HOME", h), ("AWS_PROFILE", "cfg")]),
            &AwsChoice::default(),
        )
        .unwrap();
        assert_eq!(setup.credentials.access_key_id, "AKIDCFG");
    }

    #[test]
    fn missing_credentials_name_every_place_looked() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path().to_str().unwrap();
        let err = resolve(
            &env(&[("HOME", h), ("AWS_PROFILE", "nope")]),
            &AwsChoice::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("No AWS credentials"), "{err}");
        assert!(err.contains("AWS_ACCESS_KEY_ID not set"), "{err}");
        assert!(
            err.contains(&format!("{h}/.aws/credentials (not found)")),
            "{err}"
        );
        assert!(
            err.contains(&format!("{h}/.aws/config (not found)")),
            "{err}"
        );
        assert!(err.contains("\"nope\""), "{err}");
        assert!(err.contains("aws configure"), "{err}");
    }

    #[test]
    fn an_sso_profile_gets_a_way_to_export_keys() {
        let home = home(
            "",
            "[profile sso]\nsso_session = corp\nregion = us-east-1\n",
        );
        let h = home.path().to_str().unwrap();
        let err = resolve(
            &env(&[("HOME", h), ("AWS_PROFILE", "sso")]),
            &AwsChoice::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("sso_session"), "{err}");
        assert!(
            err.contains("aws configure export-credentials --profile sso"),
            "{err}"
        );
    }

    #[test]
    fn no_region_is_a_clear_error() {
        let err = resolve(
            &env(&[
                ("HOME", "/nonexistent"),
                ("AWS_ACCESS_KEY_ID", "A"),
                ("AWS_SECRET_ACCESS_KEY", "s"),
            ]),
            &AwsChoice::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("AWS_REGION"), "{err}");
    }

    #[test]
    fn secrets_never_print() {
        let c = AwsCredentials::new("AKID", "very-secret", Some("very-token"), "test");
        let shown = format!("{c:?}");
        assert!(
            shown.contains("AKID") && !shown.contains("very-"),
            "{shown}"
        );
    }

    #[test]
    fn ini_sections_ignore_comments_and_nested_blocks() {
        let text = "; top\n[ a ]\nx = 1\n  nested = 2\n[b]\nx = 3\n";
        let a = ini_section(text, "a").unwrap();
        assert_eq!(a.get("x").map(String::as_str), Some("1"));
        assert!(!a.contains_key("nested"));
        assert!(ini_section(text, "c").is_none());
        assert!(ini_section("[unterminated\nx=1", "unterminated").is_none());
    }
}
