//! The fake's shared state: settings, queued faults, recorded requests, stored files and
//! open upload sessions, all behind one std `Mutex` that is never held across an await.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};

use crate::{Endpoint, Fault, FileRecord, RecordedRequest};

/// Shared by the server task and every [`crate::FakeGemini`] handle.
pub(crate) struct Shared {
    pub base_url: String,
    inner: Mutex<Inner>,
}

impl Shared {
    pub fn new(base_url: String) -> Self {
        Shared {
            base_url,
            inner: Mutex::new(Inner {
                api_key: crate::FakeGemini::API_KEY.to_string(),
                processing_polls: 1,
                fail_processing: false,
                faults: HashMap::new(),
                reply_text: None,
                generate_delay: Duration::ZERO,
                requests: Vec::new(),
                files: Vec::new(),
                sessions: HashMap::new(),
                generate_bodies: Vec::new(),
                guidance_notes: Vec::new(),
                generate_answered: Vec::new(),
                quotas: Default::default(),
                models_page_cap: usize::MAX,
                counter: 0,
            }),
        }
    }

    /// Lock the state; a panic elsewhere while holding the lock does not make it unusable.
    pub fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

pub(crate) struct Inner {
    pub api_key: String,
    pub processing_polls: u32,
    pub fail_processing: bool,
    pub faults: HashMap<Endpoint, VecDeque<Fault>>,
    pub reply_text: Option<String>,
    pub generate_delay: Duration,
    pub requests: Vec<RecordedRequest>,
    pub files: Vec<StoredFile>,
    pub sessions: HashMap<String, UploadSession>,
    pub generate_bodies: Vec<serde_json::Value>,
    /// Where those bodies departed from their family's guidance (`crate::guidance`).
    pub guidance_notes: Vec<String>,
    /// When each generate answer left the handler (see `FakeGemini::generate_answered_at`).
    pub generate_answered: Vec<Instant>,
    /// The request quotas, per key and model (off unless set).
    pub quotas: crate::quota::Quotas,
    /// The most models one `models.list` page holds, whatever the client asks.
    pub models_page_cap: usize,
    counter: u64,
}

impl Inner {
    /// A fresh pseudo-random lower-case alphanumeric id of `len` characters.
    pub fn new_id(&mut self, len: usize) -> String {
        const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
        self.counter += 1;
        let seed = format!(
            "{}-{}-{:?}",
            self.counter,
            std::process::id(),
            std::time::SystemTime::now()
        );
        let digest = Sha256::digest(seed.as_bytes());
        digest
            .iter()
            .cycle()
            .take(len)
            .map(|b| ALPHABET[(*b as usize) % ALPHABET.len()] as char)
            .collect()
    }

    pub fn pop_fault(&mut self, endpoint: Endpoint) -> Option<Fault> {
        self.faults.get_mut(&endpoint).and_then(|q| q.pop_front())
    }

    /// The live file with this id: not deleted and not expired (files live 48 h).
    pub fn live_file_mut(&mut self, id: &str) -> Option<&mut StoredFile> {
        let now = Utc::now();
        self.files.iter_mut().find(|f| f.id == id && f.is_live(now))
    }

    /// Bytes held by live files (Google allows 20 GB a project).
    pub fn stored_bytes(&self) -> u64 {
        let now = Utc::now();
        self.files
            .iter()
            .filter(|f| f.is_live(now))
            .map(|f| f.size_bytes)
            .sum()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileState {
    Processing,
    Active,
    Failed,
}

impl FileState {
    pub fn as_str(self) -> &'static str {
        match self {
            FileState::Processing => "PROCESSING",
            FileState::Active => "ACTIVE",
            FileState::Failed => "FAILED",
        }
    }
}

/// A finalized upload.
#[derive(Debug, Clone)]
pub(crate) struct StoredFile {
    /// The part after "files/".
    pub id: String,
    pub display_name: Option<String>,
    pub mime_type: String,
    pub size_bytes: u64,
    pub sha256: [u8; 32],
    pub state: FileState,
    /// GET polls still answering PROCESSING.
    pub polls_left: u32,
    /// Ends FAILED instead of ACTIVE.
    pub will_fail: bool,
    pub deleted: bool,
    pub chunks: u32,
    pub create_time: DateTime<Utc>,
    pub update_time: DateTime<Utc>,
    pub expiration_time: DateTime<Utc>,
    /// Duration found in the container header, if any (video and audio only).
    pub duration_secs: Option<f64>,
    /// A sound track was declared in the container header.
    pub has_audio: bool,
}

impl StoredFile {
    pub fn record(&self) -> FileRecord {
        FileRecord {
            name: format!("files/{}", self.id),
            display_name: self.display_name.clone().unwrap_or_default(),
            mime_type: self.mime_type.clone(),
            size_bytes: self.size_bytes,
            sha256_hex: hex::encode(self.sha256),
            state: self.state.as_str().to_string(),
            deleted: self.deleted,
            chunks: self.chunks,
        }
    }

    pub fn is_live(&self, now: DateTime<Utc>) -> bool {
        !self.deleted && now < self.expiration_time
    }

    pub fn sha256_hex(&self) -> String {
        hex::encode(self.sha256)
    }

    /// Finish processing now (ACTIVE, or FAILED when so configured).
    pub fn finish_processing(&mut self) {
        self.state = if self.will_fail {
            FileState::Failed
        } else {
            FileState::Active
        };
        self.update_time = Utc::now();
    }
}

/// An open resumable upload.
pub(crate) struct UploadSession {
    /// Requested id (from `file.name`), if any.
    pub requested_id: Option<String>,
    pub display_name: Option<String>,
    pub mime_type: String,
    pub declared_size: u64,
    pub received: u64,
    pub hasher: Sha256,
    /// The first bytes of the upload, kept to read the media duration.
    pub head: Vec<u8>,
    pub chunks: u32,
    /// A chunk request is streaming into this session right now.
    pub busy: bool,
    /// Set once finalized: the id of the created file.
    pub finalized: Option<String>,
}
