//! The check stage: everything that can be refused before anything leaves the machine. The
//! time limit and the model name, each source resolved to a local file and checked by its
//! content, and the provider's key. A file downloaded for a call that is refused is removed.
//! Each file's identity is kept, so a file swapped after its check is not sent (`identity`).

use std::path::PathBuf;

use super::call::Call;
use super::identity::{self, Identity};
use super::MAX_TIMEOUT;
use crate::analysis::AnalysisRequest;
use crate::config::{Adapter, ProviderConfig};
use crate::engine::Vaider;
use crate::error::{Result, VaiderError};
use crate::media::{self, MediaInfo, MediaKind};
use crate::secrets::ApiKey;
use crate::source;

/// A checked file: where it is and what it holds.
pub(super) type CheckedFile = (PathBuf, MediaInfo);

/// What the check stage found: the provider's settings, the files and the key.
pub(super) struct Checked {
    pub provider: ProviderConfig,
    /// A diff's expected image.
    pub expected: Option<CheckedFile>,
    /// The file the interaction is about (for a diff: the actual image).
    pub subject: CheckedFile,
    /// Close-ups sent after the main images.
    pub close_ups: Vec<CheckedFile>,
    pub key: Option<ApiKey>,
    /// Which file each checked path was when it was checked.
    identities: Vec<(PathBuf, Option<Identity>)>,
}

impl Checked {
    /// Every file, in the order the model sees them (a diff's expected image first, the
    /// close-ups last).
    pub fn media(&self) -> impl Iterator<Item = &CheckedFile> {
        self.expected
            .iter()
            .chain(std::iter::once(&self.subject))
            .chain(&self.close_ups)
    }

    /// Err when a checked path no longer leads to the file that was checked: called just
    /// before anything is sent.
    pub fn unchanged(&self) -> Result<()> {
        self.identities
            .iter()
            .try_for_each(|(path, checked)| identity::unchanged(path, checked))
    }
}

impl Vaider {
    pub(super) async fn check(&self, call: &Call) -> Result<Checked> {
        if self.is_paused() {
            return Err(VaiderError::Paused);
        }
        let provider = call.config.provider(&call.provider)?;
        check_limits(call, &provider)?;
        let within = async {
            let (mut media, identities) = self.check_sources(call).await?;
            let key = match self.key_for(&provider).await {
                Ok(key) => key,
                Err(error) => {
                    forget_downloads(&call.request, &media);
                    return Err(error);
                }
            };
            let close_ups =
                media.split_off(media.len().saturating_sub(call.request.close_ups.len()));
            let subject = media
                .pop()
                .ok_or_else(|| VaiderError::internal("check the media", "nothing to analyse"))?;
            Ok(Checked {
                provider,
                expected: media.pop(),
                subject,
                close_ups,
                key,
                identities,
            })
        };
        tokio::time::timeout_at(call.deadline.into(), within)
            .await
            .unwrap_or_else(|_| Err(call.timed_out()))
    }

    /// Resolves and checks every source, in order (a diff's expected image first).
    #[allow(clippy::type_complexity)]
    async fn check_sources(
        &self,
        call: &Call,
    ) -> Result<(Vec<CheckedFile>, Vec<(PathBuf, Option<Identity>)>)> {
        let request = &call.request;
        let expected_kind = if request.tool.takes_video() {
            MediaKind::Video
        } else {
            MediaKind::Image
        };
        let limit = call.config.download_limit_mb.saturating_mul(1024 * 1024);
        let (mut checked, mut identities) = (Vec::new(), Vec::new());
        for source in sources(request)? {
            let found = self.check_source(source, call, limit, expected_kind).await;
            match found {
                Ok((found, identity)) => {
                    identities.push((found.0.clone(), identity));
                    checked.push(found);
                }
                Err(error) => {
                    forget_downloads(request, &checked);
                    return Err(error);
                }
            }
        }
        Ok((checked, identities))
    }

    async fn check_source(
        &self,
        source: &str,
        call: &Call,
        limit: u64,
        expected_kind: MediaKind,
    ) -> Result<(CheckedFile, Option<Identity>)> {
        let path = source::resolve(
            source,
            &call.request.base_dirs,
            &self.http,
            &self.data_dir.join("downloads"),
            limit,
            call.deadline,
        )
        .await?;
        let check_path = path.clone();
        let inspected = tokio::task::spawn_blocking(move || {
            // The same file before and after the check, or it is not the file checked.
            let before = identity::of(&check_path);
            let info = media::inspect(&check_path, media::MAX_MEDIA_BYTES, Some(expected_kind))?;
            identity::unchanged(&check_path, &before)?;
            Ok::<_, VaiderError>((info, before))
        })
        .await
        .map_err(|e| VaiderError::internal("check the file", e))
        .and_then(|inspected| inspected);
        match inspected {
            Ok((info, identity)) => Ok(((path, info), identity)),
            Err(error) => {
                if source::is_download(source) {
                    let _ = std::fs::remove_file(&path);
                }
                Err(error)
            }
        }
    }

    /// The provider's key: required where it needs one; sent anyway to a local server that
    /// has one set.
    async fn key_for(&self, provider: &ProviderConfig) -> Result<Option<ApiKey>> {
        let found = self.api_key(&provider.name).await.map(|(key, _)| key);
        if provider.needs_key && found.is_none() {
            return Err(VaiderError::NoApiKey {
                provider: provider.name.clone(),
            });
        }
        Ok(found)
    }
}

fn check_limits(call: &Call, provider: &ProviderConfig) -> Result<()> {
    if call
        .request
        .timeout
        .is_some_and(|t| t.is_zero() || t > MAX_TIMEOUT)
    {
        return Err(VaiderError::InvalidRequest(format!(
            "The timeout must be more than 0 and at most {} seconds.",
            MAX_TIMEOUT.as_secs()
        )));
    }
    let model = &call.model;
    if model.trim().is_empty()
        || model.contains(char::is_whitespace)
        || (provider.adapter == Adapter::Gemini && model.contains('/'))
    {
        return Err(VaiderError::InvalidRequest(format!(
            "{model:?} is not a model name for {}; use one like {:?}.",
            provider.name, provider.model
        )));
    }
    Ok(())
}

/// The sources to check, in order: a diff's expected image, the media itself, the close-ups.
fn sources(request: &AnalysisRequest) -> Result<Vec<&str>> {
    let mut sources = Vec::new();
    if request.tool.takes_two_images() {
        let expected = request
            .compare_with
            .as_deref()
            .filter(|s| !s.trim().is_empty())
            .ok_or_else(|| {
                VaiderError::InvalidRequest(format!(
                    "{} needs two images: the first (expected, or before) and the second (actual, or after).",
                    request.tool.as_str()
                ))
            })?;
        sources.push(expected);
    }
    sources.push(request.source.as_str());
    sources.extend(request.close_ups.iter().map(String::as_str));
    Ok(sources)
}

/// Removes what this call downloaded (URLs and `data:` sources) when it is refused: a refused
/// call has no interaction folder to keep them beside.
fn forget_downloads(request: &AnalysisRequest, checked: &[CheckedFile]) {
    let sources = sources(request).unwrap_or_default();
    for ((path, _), source) in checked.iter().zip(sources) {
        if source::is_download(source) {
            let _ = std::fs::remove_file(path);
        }
    }
}
