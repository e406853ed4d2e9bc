//! Reading an upstream answer's body with a ceiling. A provider, GitHub or a model listing may
//! answer with any number of bytes; each is read chunk by chunk and stopped at its limit, so a
//! broken or hostile upstream costs at most that much memory. The one place every upstream
//! body is read (providers, model listings, GitHub, the doctor's probe).

/// A model's answer (generateContent, chat completions, messages, Converse) and the Gemini
/// Files API's answers. The largest seen are 1 to 2 MB (a long JSON answer with its thoughts
/// and grounding); 8 MiB leaves four times that.
pub const MAX_ANSWER_BYTES: usize = 8 * 1024 * 1024;

/// An answer that is not a success. Error bodies are a few kB (Google's with its details
/// under 10 kB); 1 MiB is plenty and keeps a retry loop from reading large bodies again and
/// again.
pub const MAX_ERROR_BYTES: usize = 1024 * 1024;

/// Why a body was not read whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BodyError {
    /// The body is larger than the limit (by its Content-Length, or by what arrived).
    TooLarge { limit: usize },
    /// The connection broke off; reqwest's message without the URL.
    BrokeOff(String),
}

impl BodyError {
    /// The error's text for a user, naming the service and the limit; never the body.
    pub fn describe(&self, service: &str, what: &str) -> String {
        match self {
            BodyError::TooLarge { limit } => format!(
                "{service}'s {what} is larger than {}; Vaider stopped reading it.",
                size_text(*limit)
            ),
            BodyError::BrokeOff(e) => format!("{service}'s {what} broke off: {e}"),
        }
    }
}

/// The whole body, or [`BodyError::TooLarge`] as soon as it passes `limit` bytes: at most
/// `limit` bytes (plus one chunk) are ever held.
pub async fn read_capped(
    mut response: reqwest::Response,
    limit: usize,
) -> Result<Vec<u8>, BodyError> {
    let too_large = BodyError::TooLarge { limit };
    if response
        .content_length()
        .is_some_and(|len| len > limit as u64)
    {
        return Err(too_large);
    }
    let mut body = Vec::new();
    while let Some(chunk) = next_chunk(&mut response).await? {
        if body.len() + chunk.len() > limit {
            return Err(too_large);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The body's first `limit` bytes, the rest left unread (for a file of which a prefix is
/// enough).
pub async fn read_prefix(
    mut response: reqwest::Response,
    limit: usize,
) -> Result<Vec<u8>, BodyError> {
    let mut body = Vec::new();
    while body.len() < limit {
        let Some(chunk) = next_chunk(&mut response).await? else {
            break;
        };
        let room = limit - body.len();
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
    }
    Ok(body)
}

async fn next_chunk(response: &mut reqwest::Response) -> Result<Option<bytes::Bytes>, BodyError> {
    response
        .chunk()
        .await
        .map_err(|e| BodyError::BrokeOff(e.without_url().to_string()))
}

/// "8 MiB", "64 kiB", "300 bytes".
pub fn size_text(bytes: usize) -> String {
    const MIB: usize = 1024 * 1024;
    match bytes {
        b if b >= MIB && b % MIB == 0 => format!("{} MiB", b / MIB),
        b if b >= MIB => format!("{:.1} MiB", b as f64 / MIB as f64),
        b if b >= 1024 && b % 1024 == 0 => format!("{} kiB", b / 1024),
        b => format!("{b} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(size_text(MAX_ANSWER_BYTES), "8 MiB");
        assert_eq!(size_text(MAX_ERROR_BYTES), "1 MiB");
        assert_eq!(size_text(64 * 1024), "64 kiB");
        assert_eq!(size_text(1536 * 1024), "1.5 MiB");
        assert_eq!(size_text(300), "300 bytes");
        let error = BodyError::TooLarge { limit: 1024 }.describe("Gemini", "answer");
        assert_eq!(
            error,
            "Gemini's answer is larger than 1 kiB; Vaider stopped reading it."
        );
    }
}
