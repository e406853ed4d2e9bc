//! `GET /api/events`: server-sent events for each history change, settings change and
//! pause, so the pages follow without polling; a listener that fell behind gets `resync`.

use std::time::Duration;

use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::{Stream, StreamExt};
use tokio::sync::broadcast;
use vaider_core::pipeline::EngineChange;

use super::control::PauseState;
use crate::AppState;

/// A broadcast receiver as a stream; a listener that fell behind is told to reload.
fn changes<T: Clone + Send + 'static>(
    receiver: broadcast::Receiver<T>,
) -> impl Stream<Item = Option<T>> {
    futures_util::stream::unfold(receiver, |mut receiver| async move {
        match receiver.recv().await {
            Ok(change) => Some((Some(change), receiver)),
            Err(broadcast::error::RecvError::Lagged(_)) => Some((None, receiver)),
            Err(broadcast::error::RecvError::Closed) => None,
        }
    })
}

fn resync() -> Event {
    Event::default().event("resync").data("{}")
}

pub(super) async fn events(
    State(state): State<AppState>,
) -> Sse<impl Stream<Item = Result<Event, std::convert::Infallible>>> {
    let rows = changes(state.engine.history().subscribe()).map(|change| match change {
        Some(change) => Event::default()
            .event("interaction")
            .json_data(change)
            .unwrap_or_default(),
        None => resync(),
    });
    let engine = changes(state.engine.subscribe()).map(|change| match change {
        Some(EngineChange::Settings) => Event::default().event("settings").data("{}"),
        Some(EngineChange::Paused(paused)) => Event::default()
            .event("server")
            .json_data(PauseState { paused })
            .unwrap_or_default(),
        None => resync(),
    });
    // Open streams would hold up a graceful shutdown: they end with the server.
    let shutdown = state.shutdown.clone();
    let stream = futures_util::stream::select(rows, engine)
        .map(Ok)
        .take_until(async move { shutdown.cancelled().await });
    Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}
