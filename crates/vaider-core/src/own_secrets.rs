//! The secrets that are Vaider's own, by value: the server's token and every provider key it
//! can find (environment, keychain, `.env`), and the cloud credentials Bedrock signs with. A
//! plan's secret value is compared with these before it is typed anywhere, so a plan cannot
//! have them typed into a page whatever the variable or keychain entry is called.

use std::path::PathBuf;

use crate::engine::Vaider;

/// Cloud credentials a provider may sign with, read from the environment.
const CLOUD_SECRETS: &[&str] = &["AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"];

/// Where Vaider's own secrets are, to be read off the async threads ([`OwnSecrets::values`]).
/// Debug never shows the keys it holds.
#[derive(Clone)]
pub struct OwnSecrets {
    data_dir: PathBuf,
    dotenv_dirs: Vec<PathBuf>,
    providers: Vec<String>,
    /// The keys the engine holds already (found before, or set by the UI).
    held: Vec<String>,
}

impl Vaider {
    /// Where this engine's own secrets are.
    pub fn own_secrets(&self) -> OwnSecrets {
        OwnSecrets {
            data_dir: self.data_dir.clone(),
            dotenv_dirs: self.dotenv_dirs.clone(),
            providers: self.config().provider_names(),
            held: self
                .keys
                .lock()
                .map(|keys| keys.values().map(|(k, _)| k.expose().to_string()).collect())
                .unwrap_or_default(),
        }
    }
}

impl std::fmt::Debug for OwnSecrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "OwnSecrets({} held)", self.held.len())
    }
}

impl OwnSecrets {
    /// Every secret value that is Vaider's own (blocking: the keychain). Never logged.
    pub fn values(&self) -> Vec<String> {
        let mut values = self.held.clone();
        if let Some(token) = existing_token(&self.data_dir) {
            values.push(token);
        }
        for provider in &self.providers {
            if let Some((key, _)) = crate::secrets::find_api_key(provider, &self.dotenv_dirs) {
                values.push(key.expose().to_string());
            }
        }
        values.extend(
            CLOUD_SECRETS
                .iter()
                .filter_map(|name| std::env::var(name).ok()),
        );
        values.retain(|v| !v.trim().is_empty());
        values
    }
}

/// The token from `VAIDER_TOKEN` or its file, without creating one.
fn existing_token(data_dir: &std::path::Path) -> Option<String> {
    let from_env = std::env::var("VAIDER_TOKEN").ok();
    let token = from_env
        .filter(|t| !t.trim().is_empty())
        .or_else(|| std::fs::read_to_string(data_dir.join("token")).ok())?;
    Some(token.trim().to_string())
}
