//! Carries DevTools between Chromium's pipes and its two clients in Vaider: chromiumoxide, over
//! a WebSocket that only it can open (a random 128-bit path, one connection, then the port
//! closes), and the warden, over an in-process channel on its own browser-level session
//! (`Target.attachToBrowserTarget`), so that its auto-attach does not collide with
//! chromiumoxide's. Every command gets a fresh number on the pipe; an answer goes back, under
//! its old number, to whoever asked; an event goes to the warden when it belongs to one of the
//! warden's sessions (its browser session and every session attached under it), else to
//! chromiumoxide.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use async_tungstenite::tungstenite::http::StatusCode;
use async_tungstenite::tungstenite::protocol::WebSocketConfig;
use async_tungstenite::tungstenite::Message;
use futures_util::StreamExt;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::unix::pipe;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot, Notify};
use tokio::task::JoinHandle;

use super::{Carriers, WardenLink};
use crate::BrowserError;

/// How long Chromium may take to open the warden's session, and chromiumoxide to connect.
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// How long one WebSocket handshake may take before its connection is dropped.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);
/// The bridge's own command (the warden's session) is number 0; the clients' start at 1.
const ATTACH_ID: u64 = 0;

/// The running bridge: the address chromiumoxide connects to once, the warden's side, and
/// the tasks that carry the messages (stopped when dropped).
pub(crate) struct Bridge {
    pub ws_url: String,
    pub warden: WardenLink,
    pub carriers: Carriers,
}

/// Who sent a command.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Client {
    Oxide,
    Warden,
}

/// Starts carrying messages between Chromium's pipes and the two clients.
pub(crate) async fn start(
    to_chromium: pipe::Sender,
    from_chromium: pipe::Receiver,
) -> Result<Bridge, BrowserError> {
    let (chromium_out, outgoing) = mpsc::unbounded_channel::<String>();
    let (incoming_in, mut incoming) = mpsc::unbounded_channel::<String>();
    let mut tasks = Carriers(vec![
        tokio::spawn(write_pipe(to_chromium, outgoing)),
        tokio::spawn(read_pipe(from_chromium, incoming_in)),
    ]);
    let attach = json!({"id": ATTACH_ID, "method": "Target.attachToBrowserTarget", "params": {}});
    let _ = chromium_out.send(attach.to_string());
    let warden_root = tokio::time::timeout(START_TIMEOUT, answer_to_attach(&mut incoming))
        .await
        .ok()
        .flatten()
        .ok_or_else(|| bridge_error("Chromium gave no browser session to the warden"))?;

    let listener = TcpListener::bind(("127.0.0.1", 0))
        .await
        .map_err(|e| bridge_error(&format!("no loopback port for chromiumoxide: {e}")))?;
    let port = listener
        .local_addr()
        .map_err(|e| bridge_error(&e.to_string()))?
        .port();
    let path = format!("/devtools/browser/{:032x}", rand::random::<u128>());
    let ws_url = format!("ws://127.0.0.1:{port}{path}");
    let (connected, oxide) = oneshot::channel();
    tasks
        .0
        .push(tokio::spawn(accept_once(listener, path, connected)));

    let (warden_out, from_warden) = mpsc::unbounded_channel();
    let (to_warden, warden_in) = mpsc::unbounded_channel();
    let router = Router {
        next_id: ATTACH_ID + 1,
        pending: HashMap::new(),
        warden_sessions: HashSet::from([warden_root.clone()]),
        warden_root,
        chromium: chromium_out,
        oxide: None,
        oxide_waiting: Vec::new(),
        warden: to_warden,
    };
    tasks
        .0
        .push(tokio::spawn(router.run(incoming, from_warden, oxide)));
    Ok(Bridge {
        ws_url,
        warden: WardenLink {
            to_browser: warden_out,
            from_browser: warden_in,
        },
        carriers: tasks,
    })
}

fn bridge_error(reason: &str) -> BrowserError {
    BrowserError::Cdp {
        doing: "connecting to the browser's DevTools pipe",
        source: chromiumoxide::error::CdpError::msg(reason.to_string()),
    }
}

/// The warden's browser session, from the answer to the bridge's own command.
async fn answer_to_attach(incoming: &mut mpsc::UnboundedReceiver<String>) -> Option<String> {
    while let Some(text) = incoming.recv().await {
        let Ok(message) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        if message["id"].as_u64() == Some(ATTACH_ID) {
            return message["result"]["sessionId"].as_str().map(str::to_string);
        }
    }
    None
}

/// Writes each message to Chromium, NUL-terminated.
async fn write_pipe(mut pipe: pipe::Sender, mut outgoing: mpsc::UnboundedReceiver<String>) {
    while let Some(text) = outgoing.recv().await {
        let written = async {
            pipe.write_all(text.as_bytes()).await?;
            pipe.write_all(b"\0").await
        };
        if let Err(error) = written.await {
            tracing::debug!(%error, "writing to the browser's DevTools pipe");
            return;
        }
    }
}

/// Reads Chromium's NUL-separated messages until it closes its end (it exited).
async fn read_pipe(mut pipe: pipe::Receiver, incoming: mpsc::UnboundedSender<String>) {
    let mut pending: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let read = match pipe.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(read) => read,
        };
        let mut start = 0;
        for (at, byte) in chunk[..read].iter().enumerate() {
            if *byte == 0 {
                pending.extend_from_slice(&chunk[start..at]);
                let message = String::from_utf8_lossy(&pending).into_owned();
                pending.clear();
                if incoming.send(message).is_err() {
                    return;
                }
                start = at + 1;
            }
        }
        pending.extend_from_slice(&chunk[start..read]);
    }
}

/// Accepts the one WebSocket at `path`, hands it over and closes the port; every other
/// request is answered 404. Handshakes run side by side, so a stalled stranger delays no one.
async fn accept_once(listener: TcpListener, path: String, connected: oneshot::Sender<Ws>) {
    let connected = Arc::new(Mutex::new(Some(connected)));
    let won = Arc::new(Notify::new());
    let path = Arc::new(path);
    let deadline = tokio::time::sleep(START_TIMEOUT);
    tokio::pin!(deadline);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let (connected, won, path) = (connected.clone(), won.clone(), path.clone());
                tokio::spawn(async move {
                    let shaken = tokio::time::timeout(HANDSHAKE_TIMEOUT, handshake(stream, &path));
                    let Ok(Ok(ws)) = shaken.await else { return };
                    let winner = connected.lock().unwrap_or_else(PoisonError::into_inner).take();
                    if let Some(winner) = winner {
                        let _ = winner.send(ws);
                        won.notify_one();
                    }
                });
            }
            _ = won.notified() => return,
            _ = &mut deadline => return,
        }
    }
}

type Ws = async_tungstenite::WebSocketStream<async_tungstenite::tokio::TokioAdapter<TcpStream>>;

/// A WebSocket handshake that succeeds only at `path`.
// The check's error type is tungstenite's own, large or not.
#[allow(clippy::result_large_err)]
async fn handshake(
    stream: TcpStream,
    path: &str,
) -> Result<Ws, async_tungstenite::tungstenite::Error> {
    let check = |request: &Request, response: Response| -> Result<Response, ErrorResponse> {
        match same_secret(request.uri().path(), path) {
            true => Ok(response),
            false => {
                let mut refused = ErrorResponse::new(None);
                *refused.status_mut() = StatusCode::NOT_FOUND;
                Err(refused)
            }
        }
    };
    let unlimited = WebSocketConfig::default()
        .max_message_size(None)
        .max_frame_size(None);
    async_tungstenite::tokio::accept_hdr_async_with_config(stream, check, Some(unlimited)).await
}

/// Compares the asked path with the secret one in time that does not depend on where they differ.
fn same_secret(asked: &str, secret: &str) -> bool {
    let differ = asked
        .bytes()
        .zip(secret.bytes())
        .fold(0u8, |acc, (a, b)| acc | (a ^ b));
    asked.len() == secret.len() && differ == 0
}

/// Who gets what: the numbers in flight, the warden's sessions, the clients' channels.
struct Router {
    next_id: u64,
    /// The pipe's number of each command in flight: its client and the client's number.
    pending: HashMap<u64, (Client, Value)>,
    warden_root: String,
    warden_sessions: HashSet<String>,
    chromium: mpsc::UnboundedSender<String>,
    /// chromiumoxide's WebSocket, once it connected; what came for it before waits here.
    oxide: Option<mpsc::UnboundedSender<String>>,
    oxide_waiting: Vec<String>,
    warden: mpsc::UnboundedSender<Value>,
}

impl Router {
    async fn run(
        mut self,
        mut incoming: mpsc::UnboundedReceiver<String>,
        mut from_warden: mpsc::UnboundedReceiver<Value>,
        oxide: oneshot::Receiver<Ws>,
    ) {
        let (oxide_in, mut from_oxide) = mpsc::unbounded_channel::<String>();
        let mut oxide = Some(oxide);
        let mut oxide_tasks = Carriers(Vec::new());
        let mut warden_open = true;
        loop {
            tokio::select! {
                text = incoming.recv() => match text {
                    Some(text) => self.route(&text),
                    None => break,
                },
                command = from_warden.recv(), if warden_open => match command {
                    Some(command) => self.command(Client::Warden, command),
                    None => warden_open = false,
                },
                text = from_oxide.recv(), if self.oxide.is_some() => match text {
                    Some(text) => match serde_json::from_str(&text) {
                        Ok(command) => self.command(Client::Oxide, command),
                        Err(error) => tracing::debug!(%error, "a message chromiumoxide sent"),
                    },
                    None => break,
                },
                ws = async { oxide.as_mut()?.await.ok() }, if oxide.is_some() => {
                    oxide = None;
                    if let Some(ws) = ws {
                        oxide_tasks.0.extend(self.connect_oxide(ws, oxide_in.clone()));
                    }
                }
            }
        }
    }

    /// Starts carrying chromiumoxide's WebSocket; what waited for it goes first.
    fn connect_oxide(
        &mut self,
        ws: Ws,
        oxide_in: mpsc::UnboundedSender<String>,
    ) -> [JoinHandle<()>; 2] {
        let (mut sink, mut stream) = ws.split();
        let (to_oxide, mut outgoing) = mpsc::unbounded_channel::<String>();
        for waiting in self.oxide_waiting.drain(..) {
            let _ = to_oxide.send(waiting);
        }
        self.oxide = Some(to_oxide);
        let writer = tokio::spawn(async move {
            while let Some(text) = outgoing.recv().await {
                if sink.send(Message::text(text)).await.is_err() {
                    return;
                }
            }
            let _ = sink.close(None).await;
        });
        let reader = tokio::spawn(async move {
            while let Some(Ok(message)) = stream.next().await {
                if message.is_close() {
                    return;
                }
                if let Message::Text(text) = message {
                    if oxide_in.send(text.as_str().to_string()).is_err() {
                        return;
                    }
                }
            }
        });
        [writer, reader]
    }

    /// A client's command, renumbered for the pipe (the warden's on its own session).
    fn command(&mut self, client: Client, mut command: Value) {
        let id = self.next_id;
        self.next_id += 1;
        self.pending.insert(id, (client, command["id"].take()));
        command["id"] = json!(id);
        if client == Client::Warden && command.get("sessionId").is_none() {
            command["sessionId"] = json!(self.warden_root);
        }
        let _ = self.chromium.send(command.to_string());
    }

    /// A message from Chromium: an answer to whoever asked, an event to whose session it is.
    fn route(&mut self, text: &str) {
        let Ok(mut message) = serde_json::from_str::<Value>(text) else {
            tracing::debug!("an unreadable message from the browser");
            return;
        };
        if let Some(id) = message.get("id").and_then(Value::as_u64) {
            let Some((client, their_id)) = self.pending.remove(&id) else {
                return;
            };
            message["id"] = their_id;
            match client {
                Client::Oxide => self.send_to_oxide(message.to_string()),
                Client::Warden => {
                    // A session the warden attached to itself is the warden's too.
                    if let Some(session) = message["result"]["sessionId"].as_str() {
                        self.warden_sessions.insert(session.to_string());
                    }
                    let _ = self.warden.send(message);
                }
            }
            return;
        }
        let session = message.get("sessionId").and_then(Value::as_str);
        if !session.is_some_and(|s| self.warden_sessions.contains(s)) {
            return self.send_to_oxide(text.to_string());
        }
        let child = message["params"]["sessionId"].as_str().map(str::to_string);
        match (message["method"].as_str(), child) {
            (Some("Target.attachedToTarget"), Some(child)) => {
                self.warden_sessions.insert(child);
            }
            (Some("Target.detachedFromTarget"), Some(child)) => {
                self.warden_sessions.remove(&child);
            }
            _ => {}
        }
        // The warden reads its browser session as the root of a connection of its own.
        if session == Some(self.warden_root.as_str()) {
            if let Some(fields) = message.as_object_mut() {
                fields.remove("sessionId");
            }
        }
        let _ = self.warden.send(message);
    }

    /// To chromiumoxide, or kept for it until it has connected.
    fn send_to_oxide(&mut self, text: String) {
        match &self.oxide {
            Some(oxide) => {
                let _ = oxide.send(text);
            }
            None => self.oxide_waiting.push(text),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_bridge_takes_one_websocket_at_its_secret_path_then_closes_its_port() {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let path = format!("/devtools/browser/{:032x}", rand::random::<u128>());
        let (connected, handed_over) = oneshot::channel();
        let acceptor = tokio::spawn(accept_once(listener, path.clone(), connected));

        // A stranger without the path: 404, and the port stays open for the real client.
        let guess = format!("ws://127.0.0.1:{port}/devtools/browser/0");
        match async_tungstenite::tokio::connect_async(guess).await {
            Err(async_tungstenite::tungstenite::Error::Http(answer)) => {
                assert_eq!(answer.status(), StatusCode::NOT_FOUND)
            }
            other => panic!("a guessed path was not refused: {:?}", other.map(|_| ())),
        }
        let real = format!("ws://127.0.0.1:{port}{path}");
        let (_client, _) = async_tungstenite::tokio::connect_async(real).await.unwrap();
        assert!(handed_over.await.is_ok());
        acceptor.await.unwrap();
        // Once chromiumoxide is connected nothing listens there any more.
        assert!(TcpStream::connect(("127.0.0.1", port)).await.is_err());
    }

    #[test]
    fn only_the_whole_secret_matches() {
        assert!(same_secret("/devtools/browser/ab", "/devtools/browser/ab"));
        assert!(!same_secret("/devtools/browser/a", "/devtools/browser/ab"));
        assert!(!same_secret(
            "/devtools/browser/abc",
            "/devtools/browser/ab"
        ));
        assert!(!same_secret("/devtools/browser/ac", "/devtools/browser/ab"));
    }
}
