//! A fake's shared state: which provider it plays, queued faults, the reply override and what
//! it received, behind one std `Mutex` that is never held across an await.

use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard};

use sha2::{Digest, Sha256};

use crate::{Fault, OpenAiOptions, RecordedRequest};

/// Which API a fake speaks.
#[derive(Debug, Clone)]
pub(crate) enum Provider {
    OpenAi(OpenAiOptions),
    Anthropic,
    /// Bedrock, with the region its signatures must be scoped to.
    Bedrock {
        region: String,
    },
}

/// Shared by the server task and every handle of one fake.
pub(crate) struct Shared {
    pub base_url: String,
    pub provider: Provider,
    inner: Mutex<Inner>,
}

impl Shared {
    pub fn new(base_url: String, provider: Provider) -> Self {
        Shared {
            base_url,
            provider,
            inner: Mutex::new(Inner {
                faults: VecDeque::new(),
                reply_text: None,
                bodies: Vec::new(),
                recorded: Vec::new(),
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
    pub faults: VecDeque<Fault>,
    pub reply_text: Option<String>,
    /// JSON bodies received on the model endpoint.
    pub bodies: Vec<serde_json::Value>,
    pub recorded: Vec<RecordedRequest>,
    counter: u64,
}

impl Inner {
    /// A fresh pseudo-random id of `len` characters from `alphabet`.
    pub fn new_id(&mut self, len: usize, alphabet: &[u8]) -> String {
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
            .enumerate()
            .map(|(i, b)| alphabet[(*b as usize + i * 7) % alphabet.len()] as char)
            .collect()
    }
}

/// Letters and digits, both cases (OpenAI and Anthropic ids use these).
pub(crate) const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
