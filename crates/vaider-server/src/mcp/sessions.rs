//! The live MCP sessions of the 2025 revisions, at most [`MAX_SESSIONS`]. rmcp's session
//! manager keeps every session a client opens until it is ended or idle for five minutes;
//! a client that opens sessions in a loop would grow the server without bound. This wraps
//! it: when a new session would pass the cap, the least recently used one is closed first
//! (its client gets 404 on its next request and opens a new one, as the spec says).

use std::collections::HashMap;
use std::sync::Mutex;

use futures_util::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::{
    ServerSseMessage, SessionId, SessionManager,
};

/// Live sessions, at most. One agent holds one or two; a machine running many agents at
/// once stays far below this, while each session costs a task and its buffers.
pub const MAX_SESSIONS: usize = 256;

/// rmcp's in-memory sessions with a cap.
pub struct CappedSessions {
    inner: LocalSessionManager,
    cap: usize,
    /// The order of use of each live session: a larger number is more recent.
    used: Mutex<Uses>,
    /// New sessions are made one at a time, so two cannot both take the last place.
    creating: tokio::sync::Mutex<()>,
}

#[derive(Default)]
struct Uses {
    clock: u64,
    last: HashMap<SessionId, u64>,
}

impl CappedSessions {
    pub fn new(cap: usize) -> CappedSessions {
        CappedSessions {
            inner: LocalSessionManager::default(),
            cap: cap.max(1),
            used: Mutex::new(Uses::default()),
            creating: tokio::sync::Mutex::new(()),
        }
    }

    /// How many sessions are live.
    pub fn live(&self) -> usize {
        self.uses(|uses| uses.last.len())
    }

    fn uses<T>(&self, f: impl FnOnce(&mut Uses) -> T) -> T {
        // A panic elsewhere while holding the lock leaves a map that is still consistent.
        let mut uses = self.used.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut uses)
    }

    /// Marks a live session as just used; an unknown one is not added.
    fn touch(&self, id: &SessionId) {
        self.uses(|uses| {
            uses.clock += 1;
            let now = uses.clock;
            if let Some(last) = uses.last.get_mut(id) {
                *last = now;
            }
        });
    }

    /// The sessions to close so one more fits, least recently used first.
    fn over_cap(&self) -> Vec<SessionId> {
        self.uses(|uses| {
            let mut oldest: Vec<(u64, SessionId)> =
                uses.last.iter().map(|(id, at)| (*at, id.clone())).collect();
            let excess = (oldest.len() + 1).saturating_sub(self.cap);
            if excess == 0 {
                return Vec::new();
            }
            oldest.sort_unstable_by_key(|(at, _)| *at);
            oldest.truncate(excess);
            oldest
                .into_iter()
                .map(|(_, id)| {
                    uses.last.remove(&id);
                    id
                })
                .collect()
        })
    }
}

impl SessionManager for CappedSessions {
    type Error = <LocalSessionManager as SessionManager>::Error;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let _one_at_a_time = self.creating.lock().await;
        for id in self.over_cap() {
            tracing::info!(session = %id, cap = self.cap, "closing the least recently used MCP session: the cap of live sessions is reached");
            self.inner.close_session(&id).await?;
        }
        let (id, transport) = self.inner.create_session().await?;
        self.uses(|uses| {
            uses.clock += 1;
            let now = uses.clock;
            uses.last.insert(id.clone(), now);
        });
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.touch(id);
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.touch(id);
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.uses(|uses| uses.last.remove(id));
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.touch(id);
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.resume(id, last_event_id).await
    }
}
