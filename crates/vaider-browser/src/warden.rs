//! Holds every target a guarded tab brings up to that tab's [`UrlPolicy`] before it runs:
//! popups and new tabs (`window.open`, `target=_blank`, `noopener` ones included), cross-site
//! frames that Chromium runs in their own process (which the tab's own interception does not
//! see), and workers. chromiumoxide lets such targets run at once on its own connection, so
//! the warden keeps its own DevTools session with the browser (see `devtools`) on which every
//! new target waits (`waitForDebuggerOnStart`) until its requests are intercepted
//! (`Fetch.enable`) with the policy of the tab it came from. A target that no tab owns never
//! runs, except the tabs Vaider itself opens (top-level pages with no opener), which `guard`
//! holds. No target runs before downloads are denied in its browser context.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{json, Value};
use tokio::sync::{mpsc, oneshot, OnceCell};
use tokio::task::JoinHandle;

use crate::devtools::WardenLink;
use crate::guard::{keep, verdict, Blocked, Refused};
use crate::url_policy::UrlPolicy;
use crate::BrowserError;

/// The policy a target is held to, and where its refusals are reported (its tab's list).
pub(crate) struct Held {
    pub policy: Arc<UrlPolicy>,
    pub refused: Refused,
}

/// Targets (by id) whose owner is known: Vaider's tabs, and what they brought up. The
/// policies in it are also every address the browser's network may reach (see `egress`).
pub(crate) type Registry = Arc<Mutex<HashMap<String, Arc<Held>>>>;

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
    /// Takes the browser's session on `link`, denies downloads in the default context and
    /// holds every new target from now on; the tabs' policies are kept in `registry`.
    pub async fn start(link: WardenLink, registry: Registry) -> Result<Warden, BrowserError> {
        let (out, commands) = mpsc::unbounded_channel();
        let cdp = Cdp { out };
        let state = State {
            cdp: cdp.clone(),
            registry: registry.clone(),
            sessions: HashMap::new(),
            contexts: HashMap::new(),
        };
        let task = tokio::spawn(run(link, commands, state));
        let deny = json!({"behavior": "deny"});
        cdp.call(None, "Browser.setDownloadBehavior", deny)
            .await
            .map_err(|e| warden_error(&e))?;
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

pub(crate) fn registry(
    registry: &Registry,
) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Held>>> {
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

/// Whether downloads are denied in a browser context: asked once, awaited by each target.
type Denied = Arc<OnceCell<bool>>;

/// What the connection's task knows: the attached sessions and the browser contexts seen.
struct State {
    cdp: Cdp,
    registry: Registry,
    sessions: HashMap<String, Attached>,
    contexts: HashMap<String, Denied>,
}

/// The session: commands out, answers to their callers, events to `State`.
async fn run(
    mut link: WardenLink,
    mut commands: mpsc::UnboundedReceiver<(Value, oneshot::Sender<Value>)>,
    mut state: State,
) {
    let mut pending: HashMap<u64, oneshot::Sender<Value>> = HashMap::new();
    let mut next_id = 0u64;
    loop {
        tokio::select! {
            command = commands.recv() => {
                let Some((mut message, answer)) = command else { return };
                next_id += 1;
                message["id"] = json!(next_id);
                pending.insert(next_id, answer);
                if link.to_browser.send(message).is_err() {
                    return;
                }
            }
            incoming = link.from_browser.recv() => {
                let Some(message) = incoming else { return };
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
        let context = self.context(info);
        match held {
            Some(held) => {
                registry(&self.registry).insert(target_id.to_string(), held);
                tokio::spawn(async move {
                    intercept_then_run(&cdp, &session, &kind, context.as_ref()).await
                });
            }
            // A tab Vaider opens: `guard` holds it; its own frames and popups still wait here.
            None if top_level => {
                tokio::spawn(async move { watch_then_run(&cdp, &session, context.as_ref()).await });
            }
            None if matches!(
                kind.as_str(),
                "worker" | "shared_worker" | "service_worker" | "iframe"
            ) =>
            {
                tracing::info!(kind, "a target no tab owns was held and never ran");
            }
            None => {
                tokio::spawn(async move { resume(&cdp, &session, context.as_ref()).await });
            }
        }
    }

    /// The target's browser context, whose downloads must be denied before the target runs.
    fn context(&mut self, info: &Value) -> Option<Context> {
        let id = info["browserContextId"].as_str()?.to_string();
        let denied = self.contexts.entry(id.clone()).or_default().clone();
        Some(Context { id, denied })
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

/// A browser context and whether its downloads are denied yet.
struct Context {
    id: String,
    denied: Denied,
}

impl Context {
    /// Denies downloads in the context (once; every target of it waits for the answer).
    async fn deny_downloads(&self, cdp: &Cdp) -> bool {
        let deny = || async {
            let params = json!({"behavior": "deny", "browserContextId": self.id});
            match cdp.call(None, "Browser.setDownloadBehavior", params).await {
                Ok(_) => true,
                Err(error) => {
                    tracing::warn!(%error, "downloads could not be denied in a browser context");
                    false
                }
            }
        };
        *self.denied.get_or_init(deny).await
    }
}

/// Intercepts every request of the target, holds what it brings up in turn, then lets it run.
/// If any step fails the target is left waiting: it never runs unguarded.
async fn intercept_then_run(cdp: &Cdp, session: &str, kind: &str, context: Option<&Context>) {
    let every_request = json!({"patterns": [{"urlPattern": "*", "requestStage": "Request"}]});
    if let Err(error) = cdp.call(Some(session), "Fetch.enable", every_request).await {
        tracing::warn!(%error, kind, "a new target could not be guarded and was not let run");
        return;
    }
    if matches!(kind, "page" | "iframe") && !watch(cdp, session).await {
        return;
    }
    resume(cdp, session, context).await;
}

async fn watch_then_run(cdp: &Cdp, session: &str, context: Option<&Context>) {
    if watch(cdp, session).await {
        resume(cdp, session, context).await;
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

/// Lets the target run, once downloads are denied in its context (else it stays waiting).
async fn resume(cdp: &Cdp, session: &str, context: Option<&Context>) {
    if let Some(context) = context {
        if !context.deny_downloads(cdp).await {
            return;
        }
    }
    if let Err(error) = cdp
        .call(Some(session), "Runtime.runIfWaitingForDebugger", json!({}))
        .await
    {
        tracing::debug!(%error, "letting a new target run");
    }
}
