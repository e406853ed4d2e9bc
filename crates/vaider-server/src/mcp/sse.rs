//! Event streams every MCP client can read. The MCP library starts each SSE stream with a
//! "priming" event whose data is empty (`id: 0`, `data:`, `retry: 3000`), which the 2025-11-25
//! spec suggests so a client can resume a stream before its first message. Clients that parse
//! every event's data as JSON choke on it: Gemini CLI's bundled client drops the whole server
//! (its `mcp list` still says "Connected"). So no event without data leaves Vaider, and the
//! reconnection hint (`retry:`) travels on the first event that carries an `id:`, the only
//! ones a client can resume after (2025 sessions keep their messages for `Last-Event-ID`);
//! on streams without ids (2026-07-28 has no resumption) there is no hint at all.

use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::{Body, BodyDataStream, Bytes};
use axum::extract::Request;
use axum::http::header;
use axum::middleware::Next;
use axum::response::Response;
use futures_util::Stream;

/// Middleware for `/mcp`: rewrites `text/event-stream` answers as described above.
pub async fn readable_streams(request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    let is_sse = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if !is_sse {
        return response;
    }
    let (parts, body) = response.into_parts();
    let events = Events {
        inner: body.into_data_stream(),
        filter: EventFilter::default(),
        done: false,
    };
    Response::from_parts(parts, Body::from_stream(events))
}

/// The body's bytes, event by event, through an [`EventFilter`].
struct Events {
    inner: BodyDataStream,
    filter: EventFilter,
    done: bool,
}

impl Stream for Events {
    type Item = Result<Bytes, axum::Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        loop {
            if self.done {
                return Poll::Ready(None);
            }
            match Pin::new(&mut self.inner).poll_next(cx) {
                Poll::Ready(Some(Ok(bytes))) => {
                    let out = self.filter.push(&bytes);
                    if !out.is_empty() {
                        return Poll::Ready(Some(Ok(out)));
                    }
                }
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(e))),
                Poll::Ready(None) => {
                    self.done = true;
                    let rest = self.filter.finish();
                    if !rest.is_empty() {
                        return Poll::Ready(Some(Ok(rest)));
                    }
                }
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

/// Splits a byte stream into SSE events (blank-line separated) and rewrites each.
#[derive(Default)]
struct EventFilter {
    buffer: Vec<u8>,
    /// A `retry:` value taken from a dropped event, for the next event with an id.
    pending_retry: Option<String>,
}

impl EventFilter {
    /// Takes the next bytes; returns the complete events ready to send.
    fn push(&mut self, bytes: &[u8]) -> Bytes {
        self.buffer.extend_from_slice(bytes);
        let mut out = Vec::new();
        while let Some((end, separator)) = event_end(&self.buffer) {
            let block: Vec<u8> = self.buffer.drain(..end + separator).collect();
            let text = String::from_utf8_lossy(&block[..end]).into_owned();
            if let Some(event) = self.rewrite(&text) {
                out.extend_from_slice(event.as_bytes());
                out.extend_from_slice(b"\n\n");
            }
        }
        Bytes::from(out)
    }

    /// What is left when the stream ends (an unterminated event), unchanged.
    fn finish(&mut self) -> Bytes {
        Bytes::from(std::mem::take(&mut self.buffer))
    }

    /// One event as it should be sent, or `None` to drop it.
    fn rewrite(&mut self, event: &str) -> Option<String> {
        let lines: Vec<&str> = event.lines().collect();
        let field = |name: &str| {
            lines.iter().find_map(|line| {
                let (key, value) = line.split_once(':').unwrap_or((line, ""));
                (key == name).then(|| value.strip_prefix(' ').unwrap_or(value).to_string())
            })
        };
        let only_comments = lines.iter().all(|line| line.starts_with(':'));
        if only_comments {
            return Some(event.to_string());
        }
        let has_data = lines.iter().any(|line| {
            line.strip_prefix("data:")
                .is_some_and(|data| !data.trim().is_empty())
        });
        if !has_data {
            if let Some(retry) = field("retry") {
                self.pending_retry = Some(retry);
            }
            return None;
        }
        let retry = self.pending_retry.take();
        match (retry, field("id"), field("retry")) {
            (Some(retry), Some(_), None) => Some(format!("retry: {retry}\n{event}")),
            _ => Some(event.to_string()),
        }
    }
}

/// Where the first complete event in `buffer` ends, and the length of its separator.
fn event_end(buffer: &[u8]) -> Option<(usize, usize)> {
    let lf = buffer.windows(2).position(|w| w == b"\n\n").map(|i| (i, 2));
    let crlf = buffer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| (i, 4));
    match (lf, crlf) {
        (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn through(chunks: &[&str]) -> String {
        let mut filter = EventFilter::default();
        let mut out = Vec::new();
        for chunk in chunks {
            out.extend_from_slice(&filter.push(chunk.as_bytes()));
        }
        out.extend_from_slice(&filter.finish());
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_priming_event_is_dropped_and_its_retry_moves_to_the_first_resumable_event() {
        let out = through(&[
            "data:\nid: 0\nretry: 3000\n\n",
            "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\nid: 0/1\n\n",
            "data: {\"jsonrpc\":\"2.0\",\"method\":\"x\"}\nid: 0/2\n\n",
        ]);
        assert_eq!(
            out,
            "retry: 3000\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\nid: 0/1\n\n\
             data: {\"jsonrpc\":\"2.0\",\"method\":\"x\"}\nid: 0/2\n\n"
        );
    }

    #[test]
    fn without_ids_there_is_no_retry_hint() {
        let out = through(&["data:\nid: 0\nretry: 3000\n\ndata: {\"a\":1}\n\n"]);
        assert_eq!(out, "data: {\"a\":1}\n\n");
    }

    #[test]
    fn events_split_across_chunks_and_keep_alives_pass() {
        let out = through(&[
            "da",
            "ta: {\"a\"",
            ":1}\n",
            "\n:\n\n",
            "data: {\"b\":2}\r\n\r\n",
        ]);
        assert_eq!(out, "data: {\"a\":1}\n\n:\n\ndata: {\"b\":2}\n\n");
    }

    #[test]
    fn no_event_without_data_is_sent() {
        let out = through(&["id: 3\n\nevent: message\ndata: \n\n"]);
        assert_eq!(out, "");
    }
}
