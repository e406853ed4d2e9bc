//! The Files API resumable upload: the start request (`X-Goog-Upload-Command: start`) and the
//! session URL requests (upload / finalize / query / cancel). Chunk bodies are streamed and
//! hashed incrementally; at most 1 MiB of head and 256 KiB of tail is ever kept per upload.

use std::ops::ControlFlow;
use std::sync::Arc;

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use chrono::Utc;
use futures_util::StreamExt;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::errors::{json_ok, ApiError};
use crate::files::file_json;
use crate::media;
use crate::router::{check_fields, header_str};
use crate::state::{FileState, Shared, StoredFile, UploadSession};

/// Every chunk but the last must be a multiple of this (Google's upload granularity).
pub(crate) const GRANULARITY: u64 = 256 * 1024;
/// The Files API limit per file.
pub(crate) const MAX_FILE_BYTES: u64 = 2 * 1024 * 1024 * 1024;
/// The Files API limit per project.
pub(crate) const MAX_PROJECT_BYTES: u64 = 20 * 1024 * 1024 * 1024;
const MAX_DISPLAY_NAME: usize = 512;

/// Fields of the `File` message, which the start body may carry (output-only ones are ignored).
const FILE_FIELDS: &[&str] = &[
    "name",
    "displayName",
    "mimeType",
    "sizeBytes",
    "createTime",
    "updateTime",
    "expirationTime",
    "sha256Hash",
    "uri",
    "downloadUri",
    "state",
    "source",
    "error",
    "videoMetadata",
];

/// `POST /upload/{v}/files` with `X-Goog-Upload-Command: start`.
pub(crate) fn start(shared: &Shared, version: &str, headers: &HeaderMap, body: &[u8]) -> Response {
    match start_inner(shared, version, headers, body) {
        Ok(resp) => resp,
        Err(e) => e.into_response(),
    }
}

fn start_inner(
    shared: &Shared,
    version: &str,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<Response, ApiError> {
    let declared = declared_size(headers)?;
    let mut metadata = start_metadata(body)?;
    let mime_type = header_str(headers, "x-goog-upload-header-content-type")
        .map(str::to_string)
        .or(metadata.mime_type.take())
        .filter(|m| !m.trim().is_empty())
        .ok_or_else(|| {
            ApiError::invalid(
                "Missing X-Goog-Upload-Header-Content-Type: the MIME type of the file is required.",
            )
        })?;

    let upload_id = open_session(shared, declared, mime_type, metadata)?;
    let url = format!(
        "{}/upload/{version}/files?upload_id={upload_id}&upload_protocol=resumable",
        shared.base_url
    );
    Ok(upload_status_response(
        StatusCode::OK,
        "active",
        None,
        &[
            ("x-goog-upload-url", url.clone()),
            ("x-goog-upload-control-url", url),
            ("x-goog-upload-chunk-granularity", GRANULARITY.to_string()),
        ],
    ))
}

/// Opens an upload session for a file that fits in the project's storage and whose requested
/// id is free; returns its id.
fn open_session(
    shared: &Shared,
    declared: u64,
    mime_type: String,
    metadata: StartMetadata,
) -> Result<String, ApiError> {
    let mut inner = shared.lock();
    if inner.stored_bytes() + declared > MAX_PROJECT_BYTES {
        return Err(ApiError::new(
            429,
            "File storage quota exceeded: a project may store at most 20 GB of files. Delete \
             files or wait for them to expire.",
        ));
    }
    if let Some(id) = &metadata.requested_id {
        if inner.live_file_mut(id).is_some() {
            return Err(ApiError::new(
                409,
                format!("File files/{id} already exists."),
            ));
        }
    }
    let upload_id = inner.new_id(64);
    inner.sessions.insert(
        upload_id.clone(),
        UploadSession {
            requested_id: metadata.requested_id,
            display_name: metadata.display_name,
            mime_type,
            declared_size: declared,
            received: 0,
            hasher: Sha256::new(),
            head: Vec::new(),
            chunks: 0,
            busy: false,
            finalized: None,
        },
    );
    Ok(upload_id)
}

/// The start request's headers: the resumable protocol, the `start` command, and the file's
/// total size (returned), within the per-file limit.
fn declared_size(headers: &HeaderMap) -> Result<u64, ApiError> {
    let protocol = header_str(headers, "x-goog-upload-protocol").unwrap_or("");
    if !protocol.eq_ignore_ascii_case("resumable") {
        return Err(ApiError::invalid(format!(
            "Unsupported upload protocol {protocol:?}: this endpoint needs \
             X-Goog-Upload-Protocol: resumable."
        )));
    }
    let command = header_str(headers, "x-goog-upload-command").unwrap_or("");
    if !command.trim().eq_ignore_ascii_case("start") {
        return Err(ApiError::invalid(format!(
            "Invalid X-Goog-Upload-Command {command:?} for a new upload: expected \"start\"."
        )));
    }
    let declared: u64 = match header_str(headers, "x-goog-upload-header-content-length") {
        None => return Err(ApiError::invalid(
            "Missing X-Goog-Upload-Header-Content-Length: the total size of the file is required.",
        )),
        Some(v) => v.trim().parse().map_err(|_| {
            ApiError::invalid(format!(
                "Invalid X-Goog-Upload-Header-Content-Length {v:?}: expected a byte count."
            ))
        })?,
    };
    if declared > MAX_FILE_BYTES {
        return Err(ApiError::invalid(format!(
            "File size {declared} bytes exceeds the maximum of {MAX_FILE_BYTES} bytes (2 GB) per file."
        )));
    }
    Ok(declared)
}

/// What the start body may say of the file to be.
#[derive(Default)]
struct StartMetadata {
    display_name: Option<String>,
    mime_type: Option<String>,
    requested_id: Option<String>,
}

/// The start body's JSON metadata: {"file": {...}} (camelCase or snake_case), or nothing.
fn start_metadata(body: &[u8]) -> Result<StartMetadata, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(StartMetadata::default());
    }
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::invalid(format!("Invalid JSON payload received. {e}")))?;
    let Value::Object(top) = &v else {
        return Err(ApiError::invalid(
            "Invalid JSON payload received. Expected an object.",
        ));
    };
    check_fields(top, &["file"], "")?;
    let Some(file) = crate::router::field(top, "file") else {
        return Ok(StartMetadata::default());
    };
    let Value::Object(file) = file else {
        return Err(ApiError::invalid(
            "Invalid JSON payload received. Expected an object at 'file'.",
        ));
    };
    check_fields(file, FILE_FIELDS, "file")?;
    let mut metadata = StartMetadata::default();
    if let Some(d) = crate::router::field(file, "displayName") {
        let d = d.as_str().ok_or_else(|| {
            ApiError::invalid("Invalid value at 'file.display_name' (TYPE_STRING)")
        })?;
        if d.chars().count() > MAX_DISPLAY_NAME {
            return Err(ApiError::invalid(format!(
                "* CreateFileRequest.file.display_name: display_name must be at most \
                 {MAX_DISPLAY_NAME} characters.\n"
            )));
        }
        metadata.display_name = Some(d.to_string());
    }
    if let Some(m) = crate::router::field(file, "mimeType").and_then(Value::as_str) {
        metadata.mime_type = Some(m.to_string());
    }
    if let Some(n) = crate::router::field(file, "name").and_then(Value::as_str) {
        let id = n.strip_prefix("files/").unwrap_or(n);
        if !valid_file_id(id) {
            return Err(ApiError::invalid(format!(
                "* CreateFileRequest.file.name: Invalid file name {n:?}: the id may hold at \
                 most 40 lower-case letters, digits and dashes, and may not start or end \
                 with a dash.\n"
            )));
        }
        metadata.requested_id = Some(id.to_string());
    }
    Ok(metadata)
}

fn valid_file_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 40
        && !id.starts_with('-')
        && !id.ends_with('-')
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// An empty-bodied answer with `X-Goog-Upload-Status` (and optionally the size received).
fn upload_status_response(
    status: StatusCode,
    upload_status: &str,
    size_received: Option<u64>,
    extra: &[(&'static str, String)],
) -> Response {
    let mut resp = status.into_response();
    let h = resp.headers_mut();
    h.insert(
        "x-goog-upload-status",
        HeaderValue::from_static(static_status(upload_status)),
    );
    if let Some(n) = size_received {
        h.insert("x-goog-upload-size-received", HeaderValue::from(n));
    }
    for (name, value) in extra {
        if let Ok(v) = HeaderValue::from_str(value) {
            h.insert(*name, v);
        }
    }
    resp
}

fn static_status(s: &str) -> &'static str {
    match s {
        "final" => "final",
        "cancelled" => "cancelled",
        _ => "active",
    }
}

/// An error answer on a session URL, telling the client where the session stands.
fn session_error(e: ApiError, upload_status: &str, received: Option<u64>) -> Response {
    let mut e = e.with_header("x-goog-upload-status", upload_status);
    if let Some(n) = received {
        e = e.with_header("x-goog-upload-size-received", n.to_string());
    }
    e.into_response()
}

/// The `{"file": File}` answer of a finalized upload.
fn final_response(shared: &Shared, file: &StoredFile, received: u64) -> Response {
    let mut resp = json_ok(&json!({ "file": file_json(file, &shared.base_url) }));
    let h = resp.headers_mut();
    h.insert("x-goog-upload-status", HeaderValue::from_static("final"));
    h.insert("x-goog-upload-size-received", HeaderValue::from(received));
    resp
}

/// Read and discard a request body; returns its length.
pub(crate) async fn drain(body: Body) -> u64 {
    let mut n = 0u64;
    let mut stream = body.into_data_stream();
    while let Some(Ok(bytes)) = stream.next().await {
        n += bytes.len() as u64;
    }
    n
}

/// Commands found in `X-Goog-Upload-Command` ("upload, finalize").
#[derive(Default)]
struct Commands {
    upload: bool,
    finalize: bool,
    query: bool,
    cancel: bool,
}

fn parse_commands(raw: &str) -> Option<Commands> {
    let mut c = Commands::default();
    for token in raw.split(',').map(|t| t.trim().to_ascii_lowercase()) {
        match token.as_str() {
            "upload" => c.upload = true,
            "finalize" => c.finalize = true,
            "query" => c.query = true,
            "cancel" => c.cancel = true,
            _ => return None,
        }
    }
    Some(c)
}

/// A request on the session URL. `record` is the index of its [`crate::RecordedRequest`].
pub(crate) async fn session_request(
    shared: Arc<Shared>,
    upload_id: String,
    headers: HeaderMap,
    body: Body,
    record: usize,
) -> Response {
    let raw_command = header_str(&headers, "x-goog-upload-command").unwrap_or("");
    let commands =
        parse_commands(raw_command).filter(|c| c.upload || c.finalize || c.query || c.cancel);
    // Everything that can be decided before reading the body.
    let decision = decide(
        &shared,
        &upload_id,
        commands.as_ref(),
        raw_command,
        &headers,
    );
    let (start, declared) = match decision {
        ControlFlow::Continue(v) => v,
        ControlFlow::Break(resp) => {
            let n = drain(body).await;
            if let Some(r) = shared.lock().requests.get_mut(record) {
                r.body_len = n;
            }
            return resp;
        }
    };
    let commands = commands.unwrap_or_default();
    let mut guard = ChunkGuard::new(&shared, &upload_id, record);
    if let Err(refusal) = guard.stream(body, start, declared).await {
        return refusal;
    }
    guard.complete(&commands)
}

/// The answer to a session request that needs no body (an unknown session or command, a
/// query, a cancel, a finalize answered before), or the chunk's start and the file's declared
/// size, with the session marked busy while the chunk streams.
fn decide(
    shared: &Shared,
    upload_id: &str,
    commands: Option<&Commands>,
    raw_command: &str,
    headers: &HeaderMap,
) -> ControlFlow<Response, (u64, u64)> {
    let mut inner = shared.lock();
    let Some(s) = inner.sessions.get(upload_id) else {
        return ControlFlow::Break(
            ApiError::new(404, "The upload session was not found or has expired.").into_response(),
        );
    };
    let Some(c) = commands else {
        return ControlFlow::Break(session_error(
            ApiError::invalid(format!(
                "Invalid X-Goog-Upload-Command {raw_command:?}: expected \"upload\", \
                 \"upload, finalize\", \"finalize\", \"query\" or \"cancel\"."
            )),
            if s.finalized.is_some() {
                "final"
            } else {
                "active"
            },
            Some(s.received),
        ));
    };
    if c.query {
        return ControlFlow::Break(match &s.finalized {
            Some(id) => final_again(shared, &inner, id, s.received),
            None => upload_status_response(StatusCode::OK, "active", Some(s.received), &[]),
        });
    }
    if c.cancel {
        let received = s.received;
        inner.sessions.remove(upload_id);
        return ControlFlow::Break(upload_status_response(
            StatusCode::OK,
            "cancelled",
            Some(received),
            &[],
        ));
    }
    if let Some(id) = &s.finalized {
        // A retried finalize after the answer got lost: answer it again.
        return ControlFlow::Break(final_again(shared, &inner, id, s.received));
    }
    if let Some(refusal) = chunk_refusal(s, c, headers) {
        return ControlFlow::Break(refusal);
    }
    let (start, declared) = (s.received, s.declared_size);
    if let Some(s) = inner.sessions.get_mut(upload_id) {
        s.busy = true;
    }
    ControlFlow::Continue((start, declared))
}

/// A finished upload's answer again: its file, or a bare "final" once the file is gone.
fn final_again(shared: &Shared, inner: &crate::state::Inner, id: &str, received: u64) -> Response {
    match inner.files.iter().find(|f| f.id == id).cloned() {
        Some(f) => final_response(shared, &f, received),
        None => upload_status_response(StatusCode::OK, "final", Some(received), &[]),
    }
}

/// Why a chunk may not be written now: another request is writing, or the offset is
/// missing, unreadable, or not where the session stands.
fn chunk_refusal(s: &UploadSession, c: &Commands, headers: &HeaderMap) -> Option<Response> {
    let offset = header_str(headers, "x-goog-upload-offset");
    let parsed = offset.map(|o| o.trim().parse::<u64>());
    let refusal = if s.busy {
        ApiError::invalid("Another request is still writing to this upload session.")
    } else if c.upload && offset.is_none() {
        ApiError::invalid("Missing X-Goog-Upload-Offset header.")
    } else if let Some(Err(_)) = parsed {
        ApiError::invalid(format!(
            "Invalid X-Goog-Upload-Offset {:?}.",
            offset.unwrap_or("")
        ))
    } else if let Some(Ok(o)) = parsed.filter(|p| p.as_ref().ok() != Some(&s.received)) {
        ApiError::invalid(format!(
            "Invalid request. The X-Goog-Upload-Offset is {o}, but {} bytes have \
             been received so far; query the session \
             (X-Goog-Upload-Command: query) and resume from there.",
            s.received
        ))
    } else {
        return None;
    };
    Some(session_error(refusal, "active", Some(s.received)))
}

/// The state of one chunk request while it streams. If the request dies half way (the future
/// is dropped or the body breaks), `Drop` keeps the whole 256 KiB blocks received, as Google
/// does, so that a `query` tells the client where to resume.
struct ChunkGuard {
    shared: Arc<Shared>,
    upload_id: String,
    record: usize,
    /// The session's hasher, advanced by whole blocks only.
    hasher: Sha256,
    /// Bytes of this request already hashed (whole blocks).
    whole: u64,
    /// All bytes of this request.
    total: u64,
    /// Bytes after the last whole block (less than one block).
    pending: Vec<u8>,
    /// New bytes for the session's head buffer.
    head: Vec<u8>,
    head_room: usize,
    /// More bytes than declared arrived: the request will be refused.
    overflow: bool,
    done: bool,
}

impl ChunkGuard {
    /// A guard over the session's hasher and the room left in its head buffer.
    fn new(shared: &Arc<Shared>, upload_id: &str, record: usize) -> ChunkGuard {
        let (head_len, hasher) = shared
            .lock()
            .sessions
            .get(upload_id)
            .map(|s| (s.head.len(), s.hasher.clone()))
            .unwrap_or((media::HEAD_BYTES, Sha256::default()));
        ChunkGuard {
            shared: shared.clone(),
            upload_id: upload_id.to_string(),
            record,
            hasher,
            whole: 0,
            total: 0,
            pending: Vec::new(),
            head: Vec::new(),
            head_room: media::HEAD_BYTES.saturating_sub(head_len),
            overflow: false,
            done: false,
        }
    }

    /// Feeds the body as it streams in, noting when its first byte came; a broken
    /// connection is refused (the guard keeps what arrived in whole 256 KiB blocks).
    async fn stream(&mut self, body: Body, start: u64, declared: u64) -> Result<(), Response> {
        let mut stream = body.into_data_stream();
        let mut first_byte_seen = false;
        while let Some(frame) = stream.next().await {
            let Ok(bytes) = frame else {
                return Err(
                    ApiError::invalid("The upload request body was interrupted.").into_response(),
                );
            };
            if !first_byte_seen && !bytes.is_empty() {
                first_byte_seen = true;
                let now = std::time::Instant::now();
                if let Some(r) = self.shared.lock().requests.get_mut(self.record) {
                    r.first_byte_at = Some(now);
                }
            }
            self.feed(&bytes, start, declared)
        }
        Ok(())
    }

    fn feed(&mut self, bytes: &[u8], start: u64, declared: u64) {
        self.total += bytes.len() as u64;
        if self.overflow || start + self.total > declared {
            self.overflow = true;
            return;
        }
        if self.head_room > 0 {
            let take = self.head_room.min(bytes.len());
            self.head.extend_from_slice(&bytes[..take]);
            self.head_room -= take;
        }
        let block = GRANULARITY as usize;
        let mut data = bytes;
        if !self.pending.is_empty() {
            let take = (block - self.pending.len()).min(data.len());
            self.pending.extend_from_slice(&data[..take]);
            data = &data[take..];
            if self.pending.len() == block {
                self.hasher.update(&self.pending);
                self.whole += block as u64;
                self.pending.clear();
            }
        }
        let whole = data.len() / block * block;
        if whole > 0 {
            self.hasher.update(&data[..whole]);
            self.whole += whole as u64;
        }
        self.pending.extend_from_slice(&data[whole..]);
    }

    /// The body arrived in full: validate and commit.
    fn complete(mut self, commands: &Commands) -> Response {
        self.done = true;
        let shared = self.shared.clone();
        let mut inner = shared.lock();
        if let Some(r) = inner.requests.get_mut(self.record) {
            r.body_len = self.total;
        }
        let Some(session) = inner.sessions.get_mut(&self.upload_id) else {
            return ApiError::new(404, "The upload session was cancelled.").into_response();
        };
        session.busy = false;
        if let Some(refusal) = self.refusal(session, commands) {
            return refusal;
        }
        // Commit.
        self.hasher.update(&self.pending);
        session.hasher = self.hasher.clone();
        session.received += self.total;
        session.head.append(&mut self.head);
        if self.total > 0 || commands.finalize {
            session.chunks += 1;
        }
        let received = session.received;
        if !commands.finalize {
            return upload_status_response(StatusCode::OK, "active", Some(received), &[]);
        }
        if received != session.declared_size {
            let declared = session.declared_size;
            inner.sessions.remove(&self.upload_id);
            return session_error(
                ApiError::invalid(format!(
                    "Invalid request. The upload was finalized with {received} bytes, but \
                     X-Goog-Upload-Header-Content-Length declared {declared} bytes."
                )),
                "final",
                Some(received),
            );
        }
        let new = NewFile::of(session);
        create_file(&mut inner, &shared, &self.upload_id, new, received)
    }

    /// Why this chunk is refused once read: more bytes than declared, a body with a bare
    /// finalize, or a chunk that is not the last and not a whole number of blocks.
    fn refusal(&self, session: &UploadSession, commands: &Commands) -> Option<Response> {
        let error = if self.overflow {
            ApiError::invalid(format!(
                "Invalid request. The upload is larger than the declared \
                 X-Goog-Upload-Header-Content-Length of {} bytes.",
                session.declared_size
            ))
        } else if !commands.upload && self.total > 0 {
            ApiError::invalid(
                "Invalid request. A request with X-Goog-Upload-Command: finalize (without \
                 upload) must have an empty body.",
            )
        } else if !commands.finalize && !self.pending.is_empty() {
            ApiError::invalid(format!(
                "Invalid request. The chunk holds {} bytes, which is not a multiple of {GRANULARITY} \
                 bytes (the upload granularity). Only the last chunk, sent with \
                 X-Goog-Upload-Command: upload, finalize, may have another size.",
                self.total
            ))
        } else {
            return None;
        };
        Some(session_error(error, "active", Some(session.received)))
    }
}

/// What a finalized session makes a file of: its hash and metadata, and what its first
/// bytes tell of the media (length, sound).
struct NewFile {
    sha256: [u8; 32],
    requested: Option<String>,
    display_name: Option<String>,
    mime_type: String,
    chunks: u32,
    has_audio: bool,
    duration_secs: Option<f64>,
}

impl NewFile {
    fn of(session: &UploadSession) -> NewFile {
        let mime_type = session.mime_type.clone();
        NewFile {
            sha256: session.hasher.clone().finalize().into(),
            requested: session.requested_id.clone(),
            display_name: session.display_name.clone(),
            chunks: session.chunks,
            has_audio: media::modality_of(&mime_type) == Some(media::Modality::Audio)
                || (media::is_video(&mime_type) && media::sniff_audio(&session.head)),
            duration_secs: if media::is_timed(&mime_type) {
                media::sniff_duration(&session.head)
            } else {
                None
            },
            mime_type,
        }
    }
}

/// Creates the finalized upload's file (PROCESSING for the configured polls) and answers
/// with it; a requested id taken meanwhile ends the session with 409.
fn create_file(
    inner: &mut crate::state::Inner,
    shared: &Shared,
    upload_id: &str,
    new: NewFile,
    received: u64,
) -> Response {
    if let Some(id) = &new.requested {
        if inner.live_file_mut(id).is_some() {
            inner.sessions.remove(upload_id);
            return session_error(
                ApiError::new(409, format!("File files/{id} already exists.")),
                "final",
                Some(received),
            );
        }
    }
    let id = match new.requested {
        Some(id) => id,
        None => inner.new_id(12),
    };
    let now = Utc::now();
    let polls = inner.processing_polls;
    let will_fail = inner.fail_processing;
    let mut file = StoredFile {
        id: id.clone(),
        display_name: new.display_name,
        mime_type: new.mime_type,
        size_bytes: received,
        sha256: new.sha256,
        state: FileState::Processing,
        polls_left: polls,
        will_fail,
        deleted: false,
        chunks: new.chunks,
        create_time: now,
        update_time: now,
        expiration_time: now + chrono::Duration::hours(48),
        duration_secs: new.duration_secs,
        has_audio: new.has_audio,
    };
    if polls == 0 {
        file.finish_processing();
    }
    if let Some(s) = inner.sessions.get_mut(upload_id) {
        s.finalized = Some(id);
        s.head = Vec::new();
    }
    let resp = final_response(shared, &file, received);
    inner.files.push(file);
    resp
}

impl Drop for ChunkGuard {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let mut inner = self.shared.lock();
        if let Some(r) = inner.requests.get_mut(self.record) {
            r.body_len = self.total;
        }
        if let Some(session) = inner.sessions.get_mut(&self.upload_id) {
            session.busy = false;
            if !self.overflow && self.whole > 0 {
                session.hasher = self.hasher.clone();
                session.received += self.whole;
                let keep = (self.whole as usize).min(self.head.len());
                session.head.extend_from_slice(&self.head[..keep]);
                session.chunks += 1;
            }
        }
    }
}
