//! A provider's models as `vaider models`, `vaider doctor` and the settings page show them:
//! listed now, each marked default, configured, listed or retiring, with what is wrong with
//! the configured one.

use serde::Serialize;

use super::{
    lifecycle, list_models, retirement, Lifecycle, ListLimits, ModelInfo, Retirement, RETIREMENTS,
};
use crate::config::ProviderConfig;
use crate::error::VaiderError;

/// One model as `vaider models`, the settings page and `vaider doctor` show it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelEntry {
    #[serde(flatten)]
    pub info: ModelInfo,
    /// Vaider's default model for this provider.
    pub default: bool,
    /// The model the config chooses.
    pub configured: bool,
    /// In the provider's own list (false for a configured model that it does not serve).
    pub listed: bool,
    pub lifecycle: Lifecycle,
    /// What the provider names instead, for a retiring model.
    pub replacements: Vec<&'static str>,
}

/// A provider's models, marked, with whether the listing itself worked.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Catalogue {
    pub provider: String,
    pub default_model: String,
    pub configured_model: String,
    pub models: Vec<ModelEntry>,
    /// Why the provider's list could not be read; the models are then the configured and
    /// default ones only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub list_error: Option<String>,
    /// The table of known shutdowns, so a page can warn about a name as it is typed.
    pub retirements: &'static [Retirement],
}

impl Catalogue {
    /// Marks `listed` (or the listing's error) for `provider` as configured.
    pub fn build(
        provider: &ProviderConfig,
        listed: Result<Vec<ModelInfo>, VaiderError>,
    ) -> Catalogue {
        let default_model = crate::config::Config::default()
            .provider(&provider.name)
            .map(|p| p.model)
            .unwrap_or_else(|_| provider.model.clone());
        let configured_model = provider.model.clone();
        let (mut infos, list_error) = match listed {
            Ok(models) => (models, None),
            Err(e) => (Vec::new(), Some(e.to_string())),
        };
        let listed_ids: Vec<String> = infos.iter().map(|m| m.id.clone()).collect();
        for extra in [&configured_model, &default_model] {
            if !infos.iter().any(|m| m.id == *extra) {
                infos.push(ModelInfo {
                    id: extra.clone(),
                    display_name: None,
                    input_token_limit: None,
                    output_token_limit: None,
                });
            }
        }
        let models = infos
            .into_iter()
            .map(|info| ModelEntry {
                default: info.id == default_model,
                configured: info.id == configured_model,
                listed: listed_ids.contains(&info.id),
                lifecycle: lifecycle(&info.id),
                replacements: retirement(&info.id)
                    .map(|r| r.replacements.to_vec())
                    .unwrap_or_default(),
                info,
            })
            .collect();
        Catalogue {
            provider: provider.name.clone(),
            default_model,
            configured_model,
            models,
            list_error,
            retirements: RETIREMENTS,
        }
    }

    /// What is wrong with the configured model, if anything: a sentence with the fix.
    pub fn configured_problem(&self) -> Option<String> {
        let entry = self.models.iter().find(|m| m.configured)?;
        let model = &entry.info.id;
        let instead = match entry.replacements.as_slice() {
            [] => format!(
                "pick a current one (`vaider models`), e.g. {}",
                self.default_model
            ),
            list => format!("use {} instead", list.join(" or ")),
        };
        let fix = "set `model` in config.toml, VAIDER_MODEL, or the Settings page";
        // Not in a list that was read: the provider does not serve it (any more).
        let served = entry.listed || self.list_error.is_some();
        let provider = &self.provider;
        let status = match (entry.lifecycle, served) {
            (Lifecycle::ShutDown { shutdown }, _) => format!("was shut down on {shutdown}"),
            (Lifecycle::Deprecated { shutdown }, false) => format!(
                "is deprecated (shuts down on {shutdown}) and no longer among {provider}'s models"
            ),
            (Lifecycle::Deprecated { shutdown }, true) => {
                format!("is deprecated and shuts down on {shutdown}")
            }
            (Lifecycle::Current, false) => format!("is not among {provider}'s models"),
            (Lifecycle::Current, true) => return None,
        };
        Some(format!("{model} {status}: {instead} ({fix})"))
    }
}

/// The models of `provider` (default: the configured one) for a program without an engine
/// (`vaider models`, `vaider doctor`): the key is looked up as analyses look it up.
pub async fn catalogue(
    config: &crate::config::Config,
    provider: Option<&str>,
    dotenv_dirs: &[std::path::PathBuf],
    limits: ListLimits,
) -> Result<Catalogue, VaiderError> {
    let provider = config.provider(provider.unwrap_or(&config.provider))?;
    let (name, dirs) = (provider.name.clone(), dotenv_dirs.to_vec());
    let key = tokio::task::spawn_blocking(move || crate::secrets::find_api_key(&name, &dirs))
        .await
        .ok()
        .flatten()
        .map(|(k, _)| k);
    let http = reqwest::Client::builder()
        .connect_timeout(limits.timeout)
        .build()
        .map_err(|e| VaiderError::internal("start an HTTP client", e))?;
    let listed = list_models(&http, &provider, key.as_ref(), limits).await;
    Ok(Catalogue::build(&provider, listed))
}

impl crate::engine::Vaider {
    /// The models of `provider` (default: the configured one), listed now within the
    /// default bounds, marked.
    pub async fn models(&self, provider: Option<&str>) -> Result<Catalogue, VaiderError> {
        let config = self.config();
        let provider = config.provider(provider.unwrap_or(&config.provider))?;
        let key = self.api_key(&provider.name).await.map(|(k, _)| k);
        let listed = list_models(&self.http, &provider, key.as_ref(), ListLimits::default()).await;
        Ok(Catalogue::build(&provider, listed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_problem_with_a_configured_model_names_the_replacement() {
        let config = crate::config::Config {
            model: "gemini-2.5-pro".into(),
            ..Default::default()
        };
        let provider = config.provider("gemini").unwrap();
        let listed = vec![ModelInfo {
            id: "gemini-3.5-flash-lite".into(),
            display_name: None,
            input_token_limit: None,
            output_token_limit: None,
        }];
        let catalogue = Catalogue::build(&provider, Ok(listed.clone()));
        let problem = catalogue.configured_problem().unwrap();
        assert!(problem.contains("gemini-2.5-pro") && problem.contains("2026-12-01"));
        assert!(problem.contains("gemini-3.5-flash-lite or gemini-3.8-flash"));
        // The default is current and listed: nothing to fix.
        let provider = crate::config::Config::default().provider("gemini").unwrap();
        assert_eq!(
            Catalogue::build(&provider, Ok(listed)).configured_problem(),
            None
        );
    }
}
