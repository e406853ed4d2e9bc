//! The default answer, which proves what arrived: one line per image or video in order (type,
//! pixel size, bytes, sha256), the text label sent right before each image (e.g. a frame's
//! timestamp), and the prompt; plus the token arithmetic both fakes share.

use serde_json::{json, Value};

use crate::media::MediaFacts;

/// One content part of a user message, in the order sent.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Seen {
    Text(String),
    Image(MediaFacts),
    /// An image given by URL (http(s) or a provider file id): accepted, never fetched.
    RemoteImage(String),
    Video(MediaFacts),
    RemoteVideo(String),
}

/// How many characters of a label or the prompt are echoed.
const ECHO_CHARS: usize = 200;

/// What the default answer says, built from the user messages' parts.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Proof {
    pub lines: Vec<String>,
    pub prompt: String,
    media: Vec<Value>,
}

impl Proof {
    /// `messages` holds the parts of each user message; a label is the text part right
    /// before an image in the same message.
    pub fn new(messages: &[Vec<Seen>]) -> Proof {
        let mut lines = Vec::new();
        let mut media = Vec::new();
        let (mut images, mut videos) = (0usize, 0usize);
        let mut prompt = String::new();
        for parts in messages {
            let mut previous: Option<&str> = None;
            for part in parts {
                if let Seen::Text(t) = part {
                    prompt = echo(t);
                    previous = Some(t);
                    continue;
                }
                if matches!(part, Seen::Image(_) | Seen::RemoteImage(_)) {
                    images += 1;
                    // The text just before an image is its label.
                    if let Some(label) = previous {
                        lines.push(format!("label: {}", echo(label)));
                    }
                } else {
                    videos += 1;
                }
                let (line, entry) = media_seen(part, images, videos);
                media.push(entry);
                lines.push(line);
                previous = None;
            }
        }
        Proof {
            lines,
            prompt,
            media,
        }
    }

    /// The plain-text answer.
    pub fn text(&self) -> String {
        let mut out = if self.lines.is_empty() {
            vec!["media: none".to_string()]
        } else {
            self.lines.clone()
        };
        out.push(format!("prompt: {}", self.prompt));
        out.join("\n")
    }

    /// The proof in one sentence, for the free strings of a JSON answer.
    pub fn sentence(&self) -> String {
        let mut parts = self.lines.clone();
        parts.push(format!("prompt: {}", self.prompt));
        parts.join("; ")
    }

    /// The answer to "reply in JSON" without a schema.
    pub fn json_object(&self) -> Value {
        json!({
            "summary": self.sentence(),
            "prompt": self.prompt,
            "media": self.media,
        })
    }

    /// A JSON answer valid for `schema`, with the proof in its strings.
    pub fn for_schema(&self, schema: &Value) -> Value {
        fake_gemini::schema::example(schema, &self.sentence())
    }
}

/// A label or prompt as echoed: one line, at most 200 characters.
fn echo(text: &str) -> String {
    text.chars()
        .take(ECHO_CHARS)
        .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
        .collect()
}

/// About four characters a token, at least one for any non-empty text.
pub(crate) fn text_tokens(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4)
}

/// The answer cut to `max_tokens` (4 characters a token); true when it was cut.
pub(crate) fn limit_answer(text: String, max_tokens: Option<u64>) -> (String, bool) {
    match max_tokens {
        Some(max) if text_tokens(&text) > max => {
            let keep = (max.saturating_mul(4)).min(usize::MAX as u64) as usize;
            (text.chars().take(keep).collect(), true)
        }
        _ => (text, false),
    }
}

/// The proof's line and `media` entry for one image or video, numbered within its kind.
fn media_seen(part: &Seen, images: usize, videos: usize) -> (String, Value) {
    match part {
        Seen::Image(f) => {
            let size = f
                .size
                .map(|(w, h)| format!("{w}x{h} px"))
                .unwrap_or_else(|| "unknown size".into());
            let entry = json!({
                "kind": "image", "index": images, "mime_type": f.mime,
                "width": f.size.map(|s| s.0), "height": f.size.map(|s| s.1),
                "bytes": f.bytes, "sha256": f.sha256,
            });
            let line = format!(
                "image {images}: {}, {size}, {} bytes, sha256 {}",
                f.mime, f.bytes, f.sha256
            );
            (line, entry)
        }
        Seen::RemoteImage(url) => (
            format!("image {images}: remote {url} (not fetched)"),
            json!({"kind": "image", "index": images, "url": url}),
        ),
        Seen::Video(f) => (
            format!(
                "video {videos}: {}, {} bytes, sha256 {}",
                f.mime, f.bytes, f.sha256
            ),
            json!({
                "kind": "video", "index": videos, "mime_type": f.mime,
                "bytes": f.bytes, "sha256": f.sha256,
            }),
        ),
        Seen::RemoteVideo(url) => (
            format!("video {videos}: remote {url} (not fetched)"),
            json!({"kind": "video", "index": videos, "url": url}),
        ),
        // Not media: the caller reads a text as the prompt or a label before this is called.
        Seen::Text(t) => (echo(t), Value::Null),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png() -> MediaFacts {
        MediaFacts {
            mime: "image/png",
            size: Some((800, 500)),
            bytes: 6824,
            sha256: "ab".repeat(32),
            duration_secs: None,
        }
    }

    #[test]
    fn labels_are_the_text_right_before_an_image() {
        let proof = Proof::new(&[vec![
            Seen::Text("Frame at 00:00.0:".into()),
            Seen::Image(png()),
            Seen::Image(png()),
            Seen::Text("Frame at\n00:03.0:".into()),
            Seen::RemoteImage("https://example.com/a.png".into()),
            Seen::Text("What happens?".into()),
        ]]);
        let text = proof.text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "label: Frame at 00:00.0:");
        assert_eq!(
            lines[1],
            format!(
                "image 1: image/png, 800x500 px, 6824 bytes, sha256 {}",
                "ab".repeat(32)
            )
        );
        assert!(lines[2].starts_with("image 2: "));
        assert_eq!(lines[3], "label: Frame at 00:03.0:");
        assert_eq!(
            lines[4],
            "image 3: remote https://example.com/a.png (not fetched)"
        );
        assert_eq!(lines[5], "prompt: What happens?");
        assert_eq!(lines.len(), 6);
    }

    #[test]
    fn no_media_and_cut_answers() {
        let proof = Proof::new(&[vec![Seen::Text("x".repeat(300))]]);
        assert_eq!(
            proof.text(),
            format!("media: none\nprompt: {}", "x".repeat(200))
        );
        assert_eq!(
            limit_answer("abcdefghij".into(), Some(2)),
            ("abcdefgh".into(), true)
        );
        assert_eq!(limit_answer("abc".into(), Some(2)), ("abc".into(), false));
        assert_eq!(text_tokens(""), 0);
        assert_eq!(text_tokens("abcde"), 2);
    }
}
