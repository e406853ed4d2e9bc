//! A tab's recording: Chromium's screencast sends a JPEG frame whenever the page changes
//! (CDP `Page.startScreencast`); each is kept with the moment it arrived, and at the end ffmpeg
//! turns them into a WebM in which every frame lasts until the next one came, so the video's
//! clock is the run's. A page that does not change sends no frames, which keeps a long wait
//! cheap.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;
use chromiumoxide::cdp::browser_protocol::page::{
    EventScreencastFrame, ScreencastFrameAckParams, StartScreencastFormat, StartScreencastParams,
    StopScreencastParams,
};
use chromiumoxide::Page;
use futures_util::StreamExt;
use tokio::task::JoinHandle;

use crate::{cdp, BrowserError, Tab};

/// JPEG quality of the frames: enough to read text, small enough to keep hundreds.
const QUALITY: i64 = 80;
/// Frames kept at most (about 10 minutes of steady change at Chromium's pace).
const MAX_FRAMES: usize = 6_000;

/// What is being recorded, until [`Recording::finish`].
pub struct Recording {
    page: Page,
    folder: PathBuf,
    started: Instant,
    frames: Arc<Mutex<Vec<(Duration, PathBuf)>>>,
    listener: JoinHandle<()>,
}

/// The finished video.
#[derive(Debug, Clone, PartialEq)]
pub struct Video {
    pub path: PathBuf,
    pub duration: Duration,
    pub frames: usize,
}

/// Why there is no video.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("the page sent no frames to record")]
    NoFrames,
    #[error("ffmpeg is not installed (apt-get install ffmpeg, or brew install ffmpeg): runs are recorded with it")]
    NoFfmpeg,
    #[error("ffmpeg could not make the video: {0}")]
    Ffmpeg(String),
    #[error("cannot keep the frames in {path}: {source}", path = path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl Tab {
    /// Starts recording the tab's page; its frames are kept in `folder` (made if missing).
    pub async fn start_recording(&self, folder: &Path) -> Result<Recording, BrowserError> {
        std::fs::create_dir_all(folder).map_err(BrowserError::Profile)?;
        let page = self.page.clone();
        let mut events = page
            .event_listener::<EventScreencastFrame>()
            .await
            .map_err(cdp("listening to the screencast"))?;
        let frames = Arc::new(Mutex::new(Vec::new()));
        let started = Instant::now();
        let listener = {
            let (page, frames, folder) = (page.clone(), frames.clone(), folder.to_path_buf());
            tokio::spawn(async move {
                while let Some(frame) = events.next().await {
                    // Chromium sends the next frame only once this one is acknowledged.
                    let _ = page
                        .execute(ScreencastFrameAckParams::new(frame.session_id))
                        .await;
                    keep_frame(&frame, started.elapsed(), &folder, &frames);
                }
            })
        };
        let params = StartScreencastParams::builder()
            .format(StartScreencastFormat::Jpeg)
            .quality(QUALITY)
            .build();
        page.execute(params)
            .await
            .map_err(cdp("starting the screencast"))?;
        Ok(Recording {
            page,
            folder: folder.to_path_buf(),
            started,
            frames,
            listener,
        })
    }
}

/// Writes one frame to the folder and notes when it came; a frame that cannot be decoded or
/// written is skipped (the one before it lasts longer).
fn keep_frame(
    frame: &EventScreencastFrame,
    at: Duration,
    folder: &Path,
    frames: &Mutex<Vec<(Duration, PathBuf)>>,
) {
    let Ok(mut kept) = frames.lock() else { return };
    if kept.len() >= MAX_FRAMES {
        return;
    }
    let data: &str = frame.data.as_ref();
    let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(data) else {
        return;
    };
    let path = folder.join(format!("frame-{:05}.jpg", kept.len() + 1));
    if std::fs::write(&path, bytes).is_ok() {
        kept.push((at, path));
    }
}

impl Recording {
    /// When the recording started: step times are placed on the video from it.
    pub fn started(&self) -> Instant {
        self.started
    }

    /// Stops the screencast and writes the WebM at `out`; the frames are removed.
    pub async fn finish(self, out: &Path) -> Result<Video, RecordError> {
        let _ = self.page.execute(StopScreencastParams::default()).await;
        let duration = self.started.elapsed();
        // Frames already on their way are written by now or not at all.
        tokio::time::sleep(Duration::from_millis(100)).await;
        self.listener.abort();
        let frames = self.frames.lock().map(|f| f.clone()).unwrap_or_default();
        let made = encode(&frames, duration, &self.folder, out).await;
        let _ = std::fs::remove_dir_all(&self.folder);
        made.map(|()| Video {
            path: out.to_path_buf(),
            duration,
            frames: frames.len(),
        })
    }
}

/// ffmpeg's concat list: each frame for as long as it was on screen, the last until the end.
fn concat_list(frames: &[(Duration, PathBuf)], end: Duration) -> String {
    let mut list = String::from("ffconcat version 1.0\n");
    for (index, (at, path)) in frames.iter().enumerate() {
        let next = frames.get(index + 1).map_or(end, |(next, _)| *next);
        let shown = next.saturating_sub(*at).max(Duration::from_millis(1));
        let name = path.display().to_string().replace('\'', "'\\''");
        list.push_str(&format!(
            "file '{name}'\nduration {:.3}\n",
            shown.as_secs_f64()
        ));
    }
    // The concat demuxer ignores the last duration unless the last file is named again.
    if let Some((_, path)) = frames.last() {
        let name = path.display().to_string().replace('\'', "'\\''");
        list.push_str(&format!("file '{name}'\n"));
    }
    list
}

/// The frames as a WebM at `out`, each for as long as it was on screen.
async fn encode(
    frames: &[(Duration, PathBuf)],
    end: Duration,
    folder: &Path,
    out: &Path,
) -> Result<(), RecordError> {
    if frames.is_empty() {
        return Err(RecordError::NoFrames);
    }
    let list = folder.join("frames.ffconcat");
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| RecordError::Io { path, source }
    };
    std::fs::write(&list, concat_list(frames, end)).map_err(io(&list))?;
    if let Some(parent) = out.parent() {
        std::fs::create_dir_all(parent).map_err(io(parent))?;
    }
    let output = ffmpeg(&list, out)
        .output()
        .await
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => RecordError::NoFfmpeg,
            _ => RecordError::Ffmpeg(e.to_string()),
        })?;
    match output.status.success() {
        true => Ok(()),
        false => Err(RecordError::Ffmpeg(
            String::from_utf8_lossy(&output.stderr)
                .trim()
                .chars()
                .take(500)
                .collect(),
        )),
    }
}

/// ffmpeg making a WebM of the frames in the concat `list`.
fn ffmpeg(list: &Path, out: &Path) -> tokio::process::Command {
    let mut command = vaider_core::child_env::async_command("ffmpeg");
    command
        .args([
            "-hide_banner",
            "-loglevel",
            "error",
            "-y",
            "-f",
            "concat",
            "-safe",
            "0",
            "-i",
        ])
        .arg(list)
        // Even sides (VP8 in yuv420p needs them), a steady 10 fps, fast encoding.
        .args([
            "-vf",
            "scale=trunc(iw/2)*2:trunc(ih/2)*2,fps=10,format=yuv420p",
        ])
        .args([
            "-c:v",
            "libvpx",
            "-b:v",
            "1M",
            "-deadline",
            "realtime",
            "-cpu-used",
            "8",
        ])
        .arg(out);
    command
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_frame_lasts_until_the_next_and_the_last_until_the_end() {
        let frames = vec![
            (
                Duration::from_millis(0),
                PathBuf::from("/f/frame-00001.jpg"),
            ),
            (Duration::from_millis(250), PathBuf::from("/f/it's.jpg")),
        ];
        let list = concat_list(&frames, Duration::from_millis(1000));
        assert_eq!(
            list,
            "ffconcat version 1.0\nfile '/f/frame-00001.jpg'\nduration 0.250\nfile '/f/it'\\''s.jpg'\nduration 0.750\nfile '/f/it'\\''s.jpg'\n"
        );
    }
}
