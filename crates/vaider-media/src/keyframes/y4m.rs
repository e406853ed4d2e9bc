//! Reading ffmpeg's uncompressed frames: the Y4M stream's header (the frame size of 4:2:0
//! planes) and its frames, read ahead on their own task with their buffers reused.

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt};

use super::*;

pub(super) fn stream_error(e: std::io::Error) -> VaiderError {
    VaiderError::internal("read ffmpeg's frames", e)
}

/// One sampled frame (its 4:2:0 planes), with the time it is shown from when its source
/// says so (an animation's frames, each as long as its delay); a video's samples are
/// `sample_fps` a second, and carry none.
pub(super) struct Sample {
    pub(super) pixels: Vec<u8>,
    pub(super) at: Option<f64>,
}

impl Sample {
    pub(super) fn sampled(pixels: Vec<u8>) -> Sample {
        Sample { pixels, at: None }
    }
}

/// Frames read ahead from the pipe on their own task, so that ffmpeg goes on decoding while
/// the last frame is measured (the pipe itself holds a fraction of one frame).
pub(super) struct FrameReader {
    pub(super) frames: tokio::sync::mpsc::Receiver<Result<Sample>>,
    pub(super) spare: tokio::sync::mpsc::UnboundedSender<Vec<u8>>,
    pub(super) task: tokio::task::JoinHandle<()>,
}

/// Frames read ahead at most: each is 1.4 MB at 1280x720.
pub(super) const FRAMES_AHEAD: usize = 2;

impl FrameReader {
    pub(super) fn start(
        mut stream: impl AsyncBufRead + Unpin + Send + 'static,
        frame_len: usize,
    ) -> Self {
        let (sender, frames) = tokio::sync::mpsc::channel(FRAMES_AHEAD);
        let (spare, mut spares) = tokio::sync::mpsc::unbounded_channel::<Vec<u8>>();
        let task = tokio::spawn(async move {
            let mut line = Vec::new();
            loop {
                line.clear();
                let frame = match stream.read_until(b'\n', &mut line).await {
                    Ok(0) => return,
                    Ok(_) if !line.starts_with(b"FRAME") => Err(VaiderError::internal(
                        "read ffmpeg's frames",
                        "the Y4M stream lost its frame markers",
                    )),
                    Ok(_) => {
                        // Buffers come back once measured, so a long video allocates few.
                        let mut frame = spares.try_recv().unwrap_or_else(|_| vec![0; frame_len]);
                        match stream.read_exact(&mut frame).await {
                            Ok(_) => Ok(Sample::sampled(frame)),
                            Err(e) => Err(stream_error(e)),
                        }
                    }
                    Err(e) => Err(stream_error(e)),
                };
                let failed = frame.is_err();
                // The receiver is gone when reading stopped early: stop too, closing the pipe.
                if sender.send(frame).await.is_err() || failed {
                    return;
                }
            }
        });
        FrameReader {
            frames,
            spare,
            task,
        }
    }

    /// The next frame, or `None` at the end of the stream.
    pub(super) async fn next(&mut self) -> Result<Option<Sample>> {
        self.frames.recv().await.transpose()
    }

    pub(super) fn recycle(&self, frame: Vec<u8>) {
        let _ = self.spare.send(frame);
    }
}

impl Drop for FrameReader {
    fn drop(&mut self) {
        // Dropping the task's stream closes the pipe, and ffmpeg stops.
        self.task.abort();
    }
}

/// The size of the frames in ffmpeg's stream.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Geometry {
    pub(super) width: usize,
    pub(super) height: usize,
}

impl Geometry {
    /// Reads `YUV4MPEG2 W1280 H720 F4:1 Ip A1:1 C420jpeg ...`; only 4:2:0 is asked for.
    pub(super) fn from_header(line: &[u8]) -> Result<Geometry> {
        let bad = |why: &str| VaiderError::internal("read ffmpeg's frames", why.to_string());
        let text = std::str::from_utf8(line).map_err(|_| bad("the Y4M header is not text"))?;
        let mut words = text.split_ascii_whitespace();
        if words.next() != Some("YUV4MPEG2") {
            return Err(bad("the stream is not Y4M"));
        }
        let (mut width, mut height) = (0usize, 0usize);
        for word in words {
            match word.split_at(1) {
                ("W", n) => width = n.parse().map_err(|_| bad("bad Y4M width"))?,
                ("H", n) => height = n.parse().map_err(|_| bad("bad Y4M height"))?,
                ("C", c) if !c.starts_with("420") => {
                    return Err(bad("the Y4M stream is not 4:2:0"))
                }
                _ => {}
            }
        }
        if width == 0 || height == 0 {
            return Err(bad("the Y4M header has no size"));
        }
        Ok(Geometry { width, height })
    }

    pub(super) fn luma_len(&self) -> usize {
        self.width * self.height
    }

    pub(super) fn chroma_width(&self) -> usize {
        self.width.div_ceil(2)
    }

    pub(super) fn chroma_height(&self) -> usize {
        self.height.div_ceil(2)
    }

    pub(super) fn chroma_len(&self) -> usize {
        self.chroma_width() * self.chroma_height()
    }

    pub(super) fn frame_len(&self) -> usize {
        self.luma_len() + 2 * self.chroma_len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn y4m_headers_give_the_frame_size() {
        let g =
            Geometry::from_header(b"YUV4MPEG2 W1280 H720 F4:1 Ip A1:1 C420jpeg XYSCSS=420JPEG\n")
                .unwrap();
        assert_eq!(
            (g.width, g.height, g.frame_len()),
            (1280, 720, 1280 * 720 * 3 / 2)
        );
        // Odd sizes round the chroma planes up.
        let g = Geometry::from_header(b"YUV4MPEG2 W33 H17 F4:1\n").unwrap();
        assert_eq!(g.frame_len(), 33 * 17 + 2 * 17 * 9);
        assert!(Geometry::from_header(b"YUV4MPEG2 W2 H2 C444\n").is_err());
        assert!(Geometry::from_header(b"P6 2 2\n").is_err());
    }
}
