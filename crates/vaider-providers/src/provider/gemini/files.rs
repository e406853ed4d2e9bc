//! Gemini's Files API: a video goes up with the resumable protocol, streamed from disk one
//! chunk at a time, is polled until ACTIVE, and is deleted after the answer (or when dropped,
//! so an error between upload and answer leaves nothing behind).

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::io::AsyncReadExt;

use super::*;

/// An uploaded file; deleted when dropped unless `delete` ran, so a timeout or an error
/// between upload and answer does not leave it behind.
pub(super) struct UploadedFile {
    name: String,
    pub(super) uri: String,
    state: String,
    pub(super) video_seconds: Option<f64>,
    cleanup: Option<(reqwest::Client, String, ApiKey)>,
}

impl Drop for UploadedFile {
    fn drop(&mut self) {
        if let Some((http, url, key)) = self.cleanup.take() {
            if let Ok(handle) = tokio::runtime::Handle::try_current() {
                handle.spawn(async move {
                    let _ = http
                        .delete(url)
                        .header("x-goog-api-key", key.expose())
                        .send()
                        .await;
                });
            }
        }
    }
}

impl GeminiProvider {
    /// Uploads one file; `before` bytes of the call's `all` were sent already (progress).
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn upload(
        &self,
        job: &ProviderJob<'_>,
        path: &Path,
        media: &MediaInfo,
        mime: &str,
        before: u64,
        all: u64,
        calls: &mut Vec<UpstreamCall>,
    ) -> Result<UploadedFile, VaiderError> {
        let total = media.size_bytes;
        let session = self.start_upload(job, path, total, mime, calls).await?;
        let mut offset: u64 = 0;
        job.progress.report(Progress::Uploading {
            sent: before,
            total: all,
        });
        loop {
            // Stopping between chunks leaves nothing: an unfinished session creates no file.
            job.ensure_wanted()?;
            let chunk = Chunk::at(offset, self.chunk_bytes as u64, total);
            let response = self.send_chunk(job, &session, path, chunk, calls).await?;
            offset += chunk.len;
            job.progress.report(Progress::Uploading {
                sent: before + offset,
                total: all,
            });
            if chunk.last {
                return self.uploaded_file(response).await;
            }
        }
    }

    /// Starts a resumable upload session and returns its URL. The session URL is a credential
    /// of its own: it is never logged or returned.
    async fn start_upload(
        &self,
        job: &ProviderJob<'_>,
        path: &Path,
        total: u64,
        mime: &str,
        calls: &mut Vec<UpstreamCall>,
    ) -> Result<String, VaiderError> {
        let display_name = display_name(path, job.interaction_id);
        let start_url = format!("{}/upload/v1beta/files", self.upstream.base_url);
        let start_body = json!({"file": {"display_name": display_name}});
        let response = self
            .upstream
            .send(
                || {
                    self.upstream
                        .http
                        .post(&start_url)
                        .header("x-goog-api-key", self.key.expose())
                        .header("X-Goog-Upload-Protocol", "resumable")
                        .header("X-Goog-Upload-Command", "start")
                        .header("X-Goog-Upload-Header-Content-Length", total.to_string())
                        .header("X-Goog-Upload-Header-Content-Type", mime)
                        .json(&start_body)
                },
                "POST",
                "/upload/v1beta/files (start)",
                job.deadline,
                calls,
                &GoogleRules,
            )
            .await?;
        response
            .headers()
            .get("x-goog-upload-url")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
            .ok_or_else(|| VaiderError::Upstream {
                message: "Gemini did not return an upload URL for the resumable upload.".into(),
                response: Some(UpstreamResponse {
                    status: response.status().as_u16(),
                    body: String::new(),
                }),
            })
    }

    /// Sends one chunk of the file, streamed from disk; the last one finalizes the upload.
    async fn send_chunk(
        &self,
        job: &ProviderJob<'_>,
        session: &str,
        path: &Path,
        chunk: Chunk,
        calls: &mut Vec<UpstreamCall>,
    ) -> Result<reqwest::Response, VaiderError> {
        let command = if chunk.last {
            "upload, finalize"
        } else {
            "upload"
        };
        self.upstream
            .send(
                || {
                    self.upstream
                        .http
                        .post(session)
                        .header("X-Goog-Upload-Offset", chunk.offset.to_string())
                        .header("X-Goog-Upload-Command", command)
                        .header(reqwest::header::CONTENT_LENGTH, chunk.len.to_string())
                        .body(file_slice(path, chunk.offset, chunk.len))
                },
                "POST",
                "upload session (chunk)",
                job.deadline,
                calls,
                &GoogleRules,
            )
            .await
    }

    /// The file the finalizing chunk's answer names, deleted when dropped from now on.
    async fn uploaded_file(
        &self,
        response: reqwest::Response,
    ) -> Result<UploadedFile, VaiderError> {
        let answer: Value = crate::provider::read_json(response, "Gemini").await?;
        let file_json = answer.get("file").cloned().unwrap_or(answer);
        let name = file_json["name"].as_str().unwrap_or_default().to_string();
        let uri = file_json["uri"].as_str().unwrap_or_default().to_string();
        if name.is_empty() || uri.is_empty() {
            return Err(VaiderError::Upstream {
                message: "Gemini's upload answer has no file name or URI.".into(),
                response: Some(UpstreamResponse {
                    status: 200,
                    body: file_json.to_string(),
                }),
            });
        }
        Ok(UploadedFile {
            cleanup: Some((
                self.upstream.http.clone(),
                format!("{}/v1beta/{}", self.upstream.base_url, name),
                self.key.clone(),
            )),
            state: file_json["state"]
                .as_str()
                .unwrap_or("PROCESSING")
                .to_string(),
            video_seconds: video_seconds(&file_json),
            name,
            uri,
        })
    }

    /// Polls the file until Gemini has processed it (ACTIVE), within the call's deadline.
    pub(super) async fn wait_until_active(
        &self,
        file: &mut UploadedFile,
        job: &ProviderJob<'_>,
        calls: &mut Vec<UpstreamCall>,
    ) -> Result<(), VaiderError> {
        let mut polls = 0;
        loop {
            match file.state.as_str() {
                "ACTIVE" => return Ok(()),
                "FAILED" => {
                    return Err(VaiderError::Upstream {
                        message: format!(
                            "Gemini could not process the video ({}). Check that it plays in a browser; re-encode it (e.g. `ffmpeg -i in.webm out.mp4`) if it does not.",
                            file.name
                        ),
                        response: None,
                    })
                }
                _ => {}
            }
            polls += 1;
            job.progress.report(Progress::Processing { polls });
            let pause = tokio::time::sleep(
                self.poll_interval
                    .min(job.deadline.saturating_duration_since(Instant::now())),
            );
            tokio::select! {
                _ = pause => {}
                // The file is already in the call's uploads, which are deleted on the way out.
                _ = job.stop.cancelled() => return Err(crate::provider::stopped()),
            }
            self.poll(file, job, calls).await?;
        }
    }

    /// Asks Gemini for the file's state (and its length, once known).
    async fn poll(
        &self,
        file: &mut UploadedFile,
        job: &ProviderJob<'_>,
        calls: &mut Vec<UpstreamCall>,
    ) -> Result<(), VaiderError> {
        let url = format!("{}/v1beta/{}", self.upstream.base_url, file.name);
        let endpoint = format!("/v1beta/{}", file.name);
        let response = self
            .upstream
            .send(
                || {
                    self.upstream
                        .http
                        .get(&url)
                        .header("x-goog-api-key", self.key.expose())
                },
                "GET",
                &endpoint,
                job.deadline,
                calls,
                &GoogleRules,
            )
            .await?;
        let body: Value = crate::provider::read_json(response, "Gemini").await?;
        file.state = body["state"].as_str().unwrap_or("PROCESSING").to_string();
        if let Some(seconds) = video_seconds(&body) {
            file.video_seconds = Some(seconds);
        }
        if file.state == "FAILED" {
            let reason = body["error"]["message"]
                .as_str()
                .unwrap_or("no reason given");
            return Err(VaiderError::Upstream {
                message: format!(
                    "Gemini could not process the video: {reason}. Check that it plays in a browser; re-encode it (e.g. `ffmpeg -i in.webm out.mp4`) if it does not."
                ),
                response: Some(UpstreamResponse {
                    status: 200,
                    body: body.to_string(),
                }),
            });
        }
        Ok(())
    }

    pub(super) async fn delete(&self, mut file: UploadedFile, calls: &mut Vec<UpstreamCall>) {
        let url = format!("{}/v1beta/{}", self.upstream.base_url, file.name);
        let started = Instant::now();
        let status = self
            .upstream
            .http
            .delete(&url)
            .header("x-goog-api-key", self.key.expose())
            .send()
            .await
            .ok()
            .map(|r| r.status().as_u16());
        calls.push(UpstreamCall {
            method: "DELETE",
            endpoint: format!("/v1beta/{}", file.name),
            status,
            duration_ms: started.elapsed().as_millis() as u64,
            attempt: 1,
        });
        if status.is_some_and(|s| s < 300 || s == 404) {
            file.cleanup = None;
        }
    }
}

/// One chunk of a resumable upload: where it starts, how long it is, whether it is the last.
#[derive(Clone, Copy)]
struct Chunk {
    offset: u64,
    len: u64,
    last: bool,
}

impl Chunk {
    /// The chunk at `offset`: `size` bytes (a multiple of 256 KiB), or what is left.
    fn at(offset: u64, size: u64, total: u64) -> Chunk {
        let len = size.min(total - offset);
        Chunk {
            offset,
            len,
            last: offset + len >= total,
        }
    }
}

pub(super) fn video_seconds(file: &Value) -> Option<f64> {
    file["videoMetadata"]["videoDuration"]
        .as_str()
        .and_then(parse_duration)
        .map(|d| d.as_secs_f64())
}

/// Google's duration strings: "37s", "45.837906927s"; bounded (see `bounded`).
pub fn parse_duration(text: &str) -> Option<Duration> {
    crate::provider::bounded::google_duration(text, crate::provider::bounded::MAX_MEDIA_DURATION)
}

pub(super) fn display_name(path: &Path, interaction_id: &str) -> String {
    let file = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!("vaider-{interaction_id}-{file}")
}

/// A request body that streams `len` bytes of the file from `offset`, so a chunk is never held
/// in memory whole; each retry opens a fresh stream.
pub(super) fn file_slice(path: &Path, offset: u64, len: u64) -> reqwest::Body {
    use std::io::Seek;
    let opened = std::fs::File::open(path).and_then(|mut file| {
        file.seek(std::io::SeekFrom::Start(offset))?;
        Ok(file)
    });
    match opened {
        Ok(file) => {
            let reader = tokio::fs::File::from_std(file).take(len);
            reqwest::Body::wrap_stream(tokio_util::io::ReaderStream::with_capacity(
                reader,
                256 * 1024,
            ))
        }
        Err(e) => reqwest::Body::wrap_stream(futures_util::stream::once(async move {
            Err::<bytes::Bytes, _>(e)
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn google_durations_parse() {
        assert_eq!(parse_duration("37s"), Some(Duration::from_secs(37)));
        let d = parse_duration("45.837906927s").unwrap();
        assert!((d.as_secs_f64() - 45.837906927).abs() < 1e-6);
        assert_eq!(parse_duration("soon"), None);
    }
}
