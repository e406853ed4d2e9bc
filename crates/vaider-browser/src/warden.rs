//! Holds every target a guarded tab brings up to that tab's [`UrlPolicy`] before it runs:
//! popups and new tabs (`window.open`, `target=_blank`, `noopener` ones included), cross-site
//! frames that Chromium runs in their own process (which the tab's own interception does not
//! see), and workers. chromiumoxide lets such targets run at once on its own connection, so
//! the warden keeps a second DevTools connection to the browser on which every new target
//! waits (`waitForDebuggerOnStart`) until its requests are intercepted (`Fetch.enable`) with
//! the policy of the tab it came from. A target that no tab owns never runs, except the tabs
//! Vaider itself opens (top-level pages with no opener), which `guard` holds.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use async_tungstenite::tungstenite::Message;
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use crate::guard::{keep, verdict, Blocked, Refused};
use crate::url_policy::UrlPolicy;
use crate::BrowserError;

/// The policy a target is held to, and where its refusals are reported (its tab's list).
pub(crate) struct Held {
    pub policy: Arc<UrlPolicy>,
    pub refused: Refused,
}

/// Targets (by id) whose owner is known: Vaider's tabs, and what they brought up.
type Registry = Arc<Mutex<HashMap<String, Arc<Held>>>>;

/// The browser's second connection and who owns which target.
pub(crate) struct Warden {
    registry: Registry,
    task: JoinHandle<()>,
}

/// One attached target on the warden's connection.
struct Attached {
    target_id: String,
    held: Option<Arc<Held>>,
    /// A top-level page (a tab or a popup), whose main frame has the target's id.
    top_level: bool,
}

/// Sends a command on the warden's connection and waits for its answer.
#[derive(Clone)]
struct Cdp {
    out: mpsc::UnboundedSender<(Value, oneshot::Sender<Value>)>,
}

impl Warden {
    /// Connects to the browser at `ws_url` and holds every new target from now on.
    pub async fn start(ws_url: &str) -> Result<Warden, BrowserError> {
        let (ws, _) = async_tungstenite::tokio::connect_async(ws_url)
            .await
            .map_err(|e| warden_error(&e.to_string()))?;
        let (out, commands) = mpsc::unbounded_channel();
        let cdp = Cdp { out };
        let registry = Registry::default();
        let state = State {
            cdp: cdp.clone(),
            registry: registry.clone(),
            sessions: HashMap::new(),
        };
        let task = tokio::spawn(run(ws, commands, state));
        let every_target =
            json!({"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true});
        cdp.call(None, "Target.setAutoAttach", every_target)
            .await
            .map_err(|e| warden_error(&e))?;
        Ok(Warden { registry, task })
    }

    /// From now on, what the tab `target_id` brings up is held to `policy`; its refusals go
    /// to `refused`. Until the returned [`Hold`] is dropped (the tab closed).
    pub fn hold(&self, target_id: &str, policy: Arc<UrlPolicy>, refused: Refused) -> Hold {
        registry(&self.registry).insert(target_id.to_string(), Arc::new(Held { policy, refused }));
        Hold {
            registry: self.registry.clone(),
            target_id: target_id.to_string(),
        }
    }
}

/// A tab's entry in the warden, removed when dropped.
pub(crate) struct Hold {
    registry: Registry,
    target_id: String,
}

impl Drop for Hold {
    fn drop(&mut self) {
        registry(&self.registry).remove(&self.target_id);
    }
}

impl Drop for Warden {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn registry(registry: &Registry) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Held>>> {
    registry.lock().unwrap_or_else(PoisonError::into_inner)
}

fn warden_error(reason: &str) -> BrowserError {
    BrowserError::Cdp {
        doing: "holding new tabs and frames to the URL policy",
        source: chromiumoxide::error::CdpError::msg(reason.to_string()),
    }
}

impl Cdp {
    async fn call(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<Value, String> {
        let mut message = json!({"method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        let (answer, answered) = oneshot::channel();
        self.out
            .send((message, answer))
            .map_err(|_| "the connection closed".to_string())?;
        let reply = answered
            .await
            .map_err(|_| "the connection closed".to_string())?;
        match reply.get("error") {
            Some(error) => Err(format!("{method}: {error}")),
            None => Ok(reply),
        }
    }
}

/// What the connection's task knows: the attached sessions.
struct State {
    cdp: Cdp,
    registry: Registry,
    sessions: HashMap<String, Attached>,
}

/// The connection: commands out, answers to their callers, events to `State`.
async fn run<S>(
    ws: S,
    mut commands: mpsc::UnboundedReceiver<(Value, oneshot::Sender<Value>)>,
    mut state: State,
) where
    S: futures_util::Stream<Item = Result<Message, async_tungstenite::tungstenite::Error>>
        + futures_util::Sink<Message>
        + Unpin,
{
    let (mut sink, mut stream) = ws.split();
    let mut pending: HashMap<u64, oneshot::Sender<Value>> = HashMap::new();
    let mut next_id = 0u64;
    loop {
        tokio::select! {
            command = commands.recv() => {
                let Some((mut message, answer)) = command else { return };
                next_id += 1;
                message["id"] = json!(next_id);
                pending.insert(next_id, answer);
                if sink.send(Message::text(message.to_string())).await.is_err() {
                    return;
                }
            }
            incoming = stream.next() => {
                let Some(Ok(incoming)) = incoming else { return };
                let Ok(text) = incoming.to_text() else { continue };
                let Ok(message) = serde_json::from_str::<Value>(text) else { continue };
                match message.get("id").and_then(Value::as_u64) {
                    Some(id) => {
                        if let Some(answer) = pending.remove(&id) {
                            let _ = answer.send(message);
                        }
                    }
                    None => state.on_event(&message),
                }
            }
        }
    }
}

impl State {
    fn on_event(&mut self, message: &Value) {
        let session = message.get("sessionId").and_then(Value::as_str);
        let params = &message["params"];
        match message["method"].as_str().unwrap_or_default() {
            "Target.attachedToTarget" => self.on_attached(session, params),
            "Target.detachedFromTarget" => {
                if let Some(id) = params["sessionId"].as_str() {
                    self.sessions.remove(id);
                }
            }
            "Fetch.requestPaused" => {
                if let Some(session) = session {
                    self.on_request(session, params);
                }
            }
            _ => {}
        }
    }

    /// A new target waits for us: held to its owner's policy, or (Vaider's own tab) let run.
    fn on_attached(&mut self, parent: Option<&str>, params: &Value) {
        let (Some(session), Some(target_id)) = (
            params["sessionId"].as_str(),
            params["targetInfo"]["targetId"].as_str(),
        ) else {
            return;
        };
        let info = &params["targetInfo"];
        let kind = info["type"].as_str().unwrap_or_default().to_string();
        let held = self.owner(parent, target_id, info);
        let top_level = parent.is_none() && kind == "page";
        self.sessions.insert(
            session.to_string(),
            Attached {
                target_id: target_id.to_string(),
                held: held.clone(),
                top_level,
            },
        );
        let (cdp, session) = (self.cdp.clone(), session.to_string());
        match held {
            Some(held) => {
                registry(&self.registry).insert(target_id.to_string(), held);
                tokio::spawn(async move { intercept_then_run(&cdp, &session, &kind).await });
            }
            // A tab Vaider opens: `guard` holds it; its own frames and popups still wait here.
            None if top_level => {
                tokio::spawn(async move { watch_then_run(&cdp, &session).await });
            }
            None if matches!(
                kind.as_str(),
                "worker" | "shared_worker" | "service_worker" | "iframe"
            ) =>
            {
                tracing::info!(kind, "a target no tab owns was held and never ran");
            }
            None => {
                tokio::spawn(async move { resume(&cdp, &session).await });
            }
        }
    }

    /// Whose policy holds the new target: its parent's (a frame, a worker), its opener's (a
    /// popup), or a tab's whose policy allows a worker's script.
    fn owner(&self, parent: Option<&str>, target_id: &str, info: &Value) -> Option<Arc<Held>> {
        let known = registry(&self.registry);
        if let Some(parent) = parent.and_then(|p| self.sessions.get(p)) {
            return parent
                .held
                .clone()
                .or_else(|| known.get(&parent.target_id).cloned());
        }
        if let Some(held) = known.get(target_id) {
            return Some(held.clone());
        }
        if let Some(opener) = info["openerId"].as_str() {
            return known.get(opener).cloned();
        }
        let worker = matches!(
            info["type"].as_str(),
            Some("service_worker" | "shared_worker")
        );
        let url = info["url"].as_str().unwrap_or_default();
        worker
            .then(|| {
                known
                    .values()
                    .find(|h| h.policy.check(url).is_ok())
                    .cloned()
            })
            .flatten()
    }

    /// A request of a held target: on or refused, by its owner's policy.
    fn on_request(&self, session: &str, params: &Value) {
        let Some(attached) = self.sessions.get(session) else {
            return;
        };
        let held = attached
            .held
            .clone()
            .or_else(|| registry(&self.registry).get(&attached.target_id).cloned());
        let url = params["request"]["url"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let document = params["resourceType"].as_str() == Some("Document");
        let popup_page = attached.top_level
            && document
            && params["frameId"].as_str() == Some(attached.target_id.as_str());
        let (cdp, session) = (self.cdp.clone(), session.to_string());
        let request_id = params["requestId"].clone();
        tokio::spawn(async move {
            let allowed = match &held {
                Some(held) => judge(held, &url, popup_page, document).await,
                None => false,
            };
            let answered = match allowed {
                true => {
                    let go_on = json!({"requestId": request_id});
                    cdp.call(Some(&session), "Fetch.continueRequest", go_on)
                        .await
                }
                false => {
                    let fail = json!({"requestId": request_id, "errorReason": "BlockedByClient"});
                    cdp.call(Some(&session), "Fetch.failRequest", fail).await
                }
            };
            if let Err(error) = answered {
                tracing::debug!(%error, "answering a paused request");
            }
        });
    }
}

/// Whether the held target may make the request; a refusal is kept on its tab.
async fn judge(held: &Held, url: &str, popup_page: bool, document: bool) -> bool {
    let Err(refusal) = verdict(&held.policy, url, popup_page, document).await else {
        return true;
    };
    tracing::info!(%refusal, "a popup's or frame's request was refused");
    keep(
        &held.refused,
        Blocked {
            refusal,
            navigation: false,
        },
    );
    false
}

/// Intercepts every request of the target, holds what it brings up in turn, then lets it run.
/// If any step fails the target is left waiting: it never runs unguarded.
async fn intercept_then_run(cdp: &Cdp, session: &str, kind: &str) {
    let every_request = json!({"patterns": [{"urlPattern": "*", "requestStage": "Request"}]});
    if let Err(error) = cdp.call(Some(session), "Fetch.enable", every_request).await {
        tracing::warn!(%error, kind, "a new target could not be guarded and was not let run");
        return;
    }
    if matches!(kind, "page" | "iframe") && !watch(cdp, session).await {
        return;
    }
    resume(cdp, session).await;
}

async fn watch_then_run(cdp: &Cdp, session: &str) {
    if watch(cdp, session).await {
        resume(cdp, session).await;
    }
}

/// Makes the target's own frames and workers wait for the warden as they start.
async fn watch(cdp: &Cdp, session: &str) -> bool {
    let children = json!({"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true});
    match cdp
        .call(Some(session), "Target.setAutoAttach", children)
        .await
    {
        Ok(_) => true,
        Err(error) => {
            tracing::warn!(%error, "a new target's frames could not be held; it was not let run");
            false
        }
    }
}

async fn resume(cdp: &Cdp, session: &str) {
    if let Err(error) = cdp
        .call(Some(session), "Runtime.runIfWaitingForDebugger", json!({}))
        .await
    {
        tracing::debug!(%error, "letting a new target run");
    }
}
