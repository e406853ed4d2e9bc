//! Windows (and any platform without inherited pipes): chromiumoxide launches Chromium with its
//! DevTools port, and the warden reaches it over a second WebSocket carried into the same
//! [`WardenLink`] the pipe gives on Unix. The port is open to other local users while the
//! browser runs: SECURITY.md says so.

use std::path::Path;

use async_tungstenite::tungstenite::Message;
use futures_util::StreamExt;
use serde_json::Value;
use tokio::sync::mpsc;

use super::{Carriers, Started, WardenLink};
use crate::BrowserError;

/// Starts `program` with `args` and its DevTools port, and connects the warden to it.
pub(crate) async fn start(program: &Path, args: &[String]) -> Result<Started, BrowserError> {
    let launch_error = |source| BrowserError::Launch {
        path: program.to_path_buf(),
        source,
    };
    let mut config = chromiumoxide::BrowserConfig::builder()
        .chrome_executable(program)
        .disable_default_args()
        // Headless or not is among `args`.
        .with_head()
        .viewport(None)
        // chromiumoxide cannot clear the environment: every variable outside the
        // allow-list (keys, the token, cloud credentials) reaches Chromium empty.
        .envs(vaider_core::child_env::blanked());
    if let Some(profile) = args.iter().find_map(|a| a.strip_prefix("--user-data-dir=")) {
        config = config.user_data_dir(profile);
    }
    for arg in args {
        config = with_flag(config, arg);
    }
    let config = config
        .build()
        .map_err(|reason| launch_error(chromiumoxide::error::CdpError::msg(reason)))?;
    let (browser, handler) = chromiumoxide::Browser::launch(config)
        .await
        .map_err(launch_error)?;
    let (warden, carrier) = connect_warden(browser.websocket_address()).await?;
    Ok(Started {
        browser,
        handler,
        warden,
        child: None,
        carriers: Carriers(vec![carrier]),
    })
}

/// Adds a `--name[=value]` flag the way chromiumoxide wants it: it writes the `--` itself, so
/// a flag given whole would reach Chromium as `----name` and be ignored.
fn with_flag(
    config: chromiumoxide::browser::BrowserConfigBuilder,
    flag: &str,
) -> chromiumoxide::browser::BrowserConfigBuilder {
    let flag = flag.trim_start_matches('-');
    match flag.split_once('=') {
        Some((name, value)) => config.arg((name, value)),
        None => config.arg(flag),
    }
}

/// The warden's own WebSocket to the browser, carried to and from its channel.
async fn connect_warden(
    ws_url: &str,
) -> Result<(WardenLink, tokio::task::JoinHandle<()>), BrowserError> {
    let (ws, _) = async_tungstenite::tokio::connect_async(ws_url)
        .await
        .map_err(|e| BrowserError::Cdp {
            doing: "holding new tabs and frames to the URL policy",
            source: chromiumoxide::error::CdpError::msg(e.to_string()),
        })?;
    let (to_browser, mut outgoing) = mpsc::unbounded_channel::<Value>();
    let (incoming, from_browser) = mpsc::unbounded_channel::<Value>();
    let (mut sink, mut stream) = ws.split();
    let carrier = tokio::spawn(async move {
        loop {
            tokio::select! {
                command = outgoing.recv() => {
                    let Some(command) = command else { return };
                    if sink.send(Message::text(command.to_string())).await.is_err() {
                        return;
                    }
                }
                message = stream.next() => {
                    let Some(Ok(message)) = message else { return };
                    let Ok(text) = message.to_text() else { continue };
                    let Ok(message) = serde_json::from_str::<Value>(text) else { continue };
                    if incoming.send(message).is_err() {
                        return;
                    }
                }
            }
        }
    });
    let link = WardenLink {
        to_browser,
        from_browser,
    };
    Ok((link, carrier))
}
