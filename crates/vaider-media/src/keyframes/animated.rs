//! An animated GIF, APNG or WebP read as a recording, without ffmpeg (Debian 12's cannot
//! decode an animated WebP): the `image` crate decodes and composites each frame as a browser
//! shows it; it is laid on white, turned into 4:2:0 planes and shrunk to the size asked (the
//! detector's, or `max_width` for frames to keep), and goes to the scan with the time it is
//! shown from on the animation's own clock (the delays before it, each as browsers play it,
//! `media::shown_ms`). Every frame is one sample: none is missed however short, and a still
//! stretch is one sample however long.
//!
//! Bounds: a canvas over `MAX_ANIMATION_PIXELS` is refused before any frame is decoded; at
//! most `Animation::frames_watched` frames are read. One frame is held at a time, with the one
//! before it (plus the few the scan reads ahead), whatever the file's length.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use image::codecs::{gif::GifDecoder, png::PngDecoder, webp::WebPDecoder};
use image::{AnimationDecoder, Frames, ImageDecoder, Limits, RgbaImage};

use super::raw::Shrinker;
use super::y4m::{Sample, FRAMES_AHEAD};
use super::{FrameReader, Geometry, InputFacts};
use crate::media::{self, Animation, MediaInfo, MAX_ANIMATION_PIXELS};
use vaider_base::error::{Result, VaiderError};

/// An animated image about to be read.
pub(super) struct AnimatedImage {
    path: PathBuf,
    info: MediaInfo,
    animation: Animation,
}

impl AnimatedImage {
    /// The file, when its content is an animated GIF, APNG or WebP; None for anything else.
    /// Err for an animation too large to decode.
    pub fn open(path: &Path) -> Result<Option<AnimatedImage>> {
        // Only a GIF, PNG or WebP may be one: a video is not walked twice.
        let mut prefix = [0u8; 16];
        let read = File::open(path).and_then(|mut f| std::io::Read::read(&mut f, &mut prefix));
        let may_be = read.ok().and_then(|n| media::sniff(&prefix[..n]));
        if !matches!(may_be, Some((_, _, "GIF" | "PNG" | "WebP"))) {
            return Ok(None);
        }
        let Ok(info) = media::inspect(path, media::MAX_MEDIA_BYTES, None) else {
            return Ok(None);
        };
        let Some(animation) = info.animation else {
            return Ok(None);
        };
        let pixels = u64::from(animation.width) * u64::from(animation.height);
        if pixels > MAX_ANIMATION_PIXELS || pixels == 0 {
            return Err(VaiderError::InvalidPath {
                message: format!(
                    "{} is an animated {} of {}x{} pixels; Vaider watches animations of at most {MAX_ANIMATION_PIXELS} pixels a frame (3840x2160). Scale it down, or record a video instead.",
                    path.display(),
                    info.format,
                    animation.width,
                    animation.height
                ),
            });
        }
        Ok(Some(AnimatedImage {
            path: path.to_path_buf(),
            info,
            animation,
        }))
    }

    pub fn geometry(&self) -> Geometry {
        Geometry {
            width: self.animation.width as usize,
            height: self.animation.height as usize,
        }
    }

    /// Whether every frame is read (none past the bounds).
    pub fn reads_all(&self) -> bool {
        self.animation.frames_watched() == self.animation.frames
    }

    /// What ffmpeg would have said of it: its length (of the frames watched, once read) and
    /// size; no sound.
    pub fn facts(&self) -> InputFacts {
        InputFacts {
            duration: Some(self.animation.duration_ms as f64 / 1000.0),
            has_audio: false,
            size: Some((self.animation.width, self.animation.height)),
        }
    }

    /// Decodes the frames on a blocking thread, each shrunk to `out`; they come as ffmpeg's
    /// would, with their times.
    pub fn start(self, out: Geometry) -> FrameReader {
        let (sender, frames) = tokio::sync::mpsc::channel(FRAMES_AHEAD);
        let (spare, mut spares) = tokio::sync::mpsc::unbounded_channel::<Vec<u8>>();
        let task = tokio::task::spawn_blocking(move || {
            let fail = |e: &dyn std::fmt::Display| {
                VaiderError::InvalidPath {
                message: format!(
                    "the animated {} {} could not be decoded ({e}); check that it plays in a browser.",
                    self.info.format,
                    self.path.display()
                ),
            }
            };
            let frames = match self.frames() {
                Ok(frames) => frames,
                Err(e) => {
                    let _ = sender.blocking_send(Err(fail(&e)));
                    return;
                }
            };
            let full = self.geometry();
            let shrink = (full != out).then(|| Shrinker::new(full, out));
            let mut planes = vec![0u8; full.frame_len()];
            // The frame before and what it became: a frame equal to it (a still stretch written
            // frame after frame) is not converted again.
            let mut before: Option<(RgbaImage, Vec<u8>)> = None;
            let mut at_ms = 0u64;
            let watched = self.animation.frames_watched() as usize;
            for frame in frames.take(watched) {
                let sample = frame.map_err(|e| fail(&e)).and_then(|frame| {
                    let (numerator, denominator) = frame.delay().numer_denom_ms();
                    let delay = u64::from(numerator) / u64::from(denominator.max(1));
                    let at = at_ms as f64 / 1000.0;
                    at_ms += media::shown_ms(delay);
                    let image = frame.into_buffer();
                    if image.dimensions() != (full.width as u32, full.height as u32) {
                        return Err(fail(&"a frame is not the size of the canvas"));
                    }
                    let pixels = match &before {
                        Some((rgba, pixels)) if *rgba == image => pixels.clone(),
                        _ => {
                            to_yuv420(&image, full, &mut planes);
                            let pixels = match &shrink {
                                Some(shrink) => {
                                    let mut shrunk = spares
                                        .try_recv()
                                        .unwrap_or_else(|_| vec![0; out.frame_len()]);
                                    shrink.frame(&planes, &mut shrunk);
                                    shrunk
                                }
                                None => planes.clone(),
                            };
                            before = Some((image, pixels.clone()));
                            pixels
                        }
                    };
                    Ok(Sample {
                        pixels,
                        at: Some(at),
                    })
                });
                let failed = sample.is_err();
                // The receiver is gone when reading stopped early: stop too.
                if sender.blocking_send(sample).is_err() || failed {
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

    /// The decoder's frames, composited on the canvas.
    fn frames(&self) -> image::ImageResult<Frames<'static>> {
        let reader = || -> image::ImageResult<BufReader<File>> {
            Ok(BufReader::new(File::open(&self.path)?))
        };
        // The canvas was checked; this bounds what a lying header could make it allocate.
        let mut limits = Limits::default();
        limits.max_alloc = Some(MAX_ANIMATION_PIXELS * 4 * 4);
        Ok(match self.info.format {
            "GIF" => {
                let mut decoder = GifDecoder::new(reader()?)?;
                decoder.set_limits(limits)?;
                decoder.into_frames()
            }
            "PNG" => PngDecoder::with_limits(reader()?, limits)?
                .apng()?
                .into_frames(),
            _ => {
                let mut decoder = WebPDecoder::new(reader()?)?;
                decoder.set_limits(limits)?;
                decoder.into_frames()
            }
        })
    }
}

/// An RGBA frame laid on white and turned into limited-range BT.601 4:2:0 planes, as
/// ffmpeg's `yuv420p` output is (and as the JPEG writer reads them back): one pass over each
/// 2x2 block, its four lumas and its averaged chroma.
fn to_yuv420(image: &RgbaImage, geometry: Geometry, out: &mut [u8]) {
    let (width, height) = (geometry.width, geometry.height);
    let chroma_width = geometry.chroma_width();
    let (luma, chroma) = out.split_at_mut(geometry.luma_len());
    let (u_plane, v_plane) = chroma.split_at_mut(geometry.chroma_len());
    let pixels = image.as_raw();
    let level = |v: f32| v.round().clamp(0.0, 255.0) as u8;
    for cy in 0..geometry.chroma_height() {
        for cx in 0..chroma_width {
            let (mut sum, mut n) = ([0f32; 3], 0f32);
            for y in (2 * cy)..(2 * cy + 2).min(height) {
                for x in (2 * cx)..(2 * cx + 2).min(width) {
                    let p = &pixels[(y * width + x) * 4..][..4];
                    // Transparent pixels show the page behind them: white.
                    let alpha = f32::from(p[3]) / 255.0;
                    let c = [0, 1, 2].map(|i| f32::from(p[i]) * alpha + 255.0 * (1.0 - alpha));
                    luma[y * width + x] =
                        level(16.0 + (65.481 * c[0] + 128.553 * c[1] + 24.966 * c[2]) / 255.0);
                    sum = [sum[0] + c[0], sum[1] + c[1], sum[2] + c[2]];
                    n += 1.0;
                }
            }
            let [r, g, b] = sum.map(|s| s / n);
            let at = cy * chroma_width + cx;
            u_plane[at] = level(128.0 + (-37.797 * r - 74.203 * g + 112.0 * b) / 255.0);
            v_plane[at] = level(128.0 + (112.0 * r - 93.786 * g - 18.214 * b) / 255.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{extract, timeline, KeyframeOptions};
    use super::*;
    use vaider_test_support::animations::{apng, gif, screen, webp, Shown};

    const WHITE: [u8; 3] = [255, 255, 255];

    /// A still stretch of two equal frames, a box shown for 130 ms (shorter than a video's
    /// sampling interval), another for "0 ms" (100 ms as browsers play it), then white for
    /// 1.5 s in two equal frames.
    fn recording() -> Vec<Shown> {
        let (w, h) = (160, 120);
        vec![
            (screen(w, h, WHITE, None), 400),
            (screen(w, h, WHITE, None), 400),
            (screen(w, h, WHITE, Some((10, 10, 24))), 130),
            (screen(w, h, WHITE, Some((100, 60, 24))), 0),
            (screen(w, h, WHITE, None), 1000),
            (screen(w, h, WHITE, None), 500),
        ]
    }

    fn formats() -> [(&'static str, Vec<u8>); 3] {
        [
            ("rec.gif", gif(&recording())),
            ("rec.png", apng(&recording())),
            ("rec.webp", webp(&recording())),
        ]
    }

    /// Each frame is seen at the time its delays put it, however short, without ffmpeg; a
    /// still stretch is one frame; the kept frames show what the animation showed then.
    #[tokio::test]
    async fn every_format_is_watched_on_its_own_clock_without_ffmpeg() {
        // Only this test sets the variable; nextest runs each test in its own process.
        std::env::set_var("VAIDER_FFMPEG", "/nonexistent/ffmpeg");
        let dir = tempfile::tempdir().unwrap();
        for (name, bytes) in formats() {
            let path = dir.path().join(name);
            std::fs::write(&path, bytes).unwrap();
            let options = KeyframeOptions::default();
            let seen = timeline(&path, &options).await.unwrap();
            assert_eq!(seen.changes, vec![0.0, 0.8, 0.93, 1.03], "{name}");
            assert_eq!(seen.samples, 6, "{name}");
            assert!((seen.sampled_seconds - 2.53).abs() < 1e-9, "{name}");
            assert_eq!((seen.width, seen.height, seen.has_audio), (160, 120, false));
            let out = dir.path().join(format!("{name}.frames"));
            let frames = extract(&path, &out, &options).await.unwrap();
            let times: Vec<f64> = frames.iter().map(|f| f.at_seconds).collect();
            // The last frame is always sent: a test ends on it.
            assert_eq!(times, vec![0.0, 0.8, 0.93, 1.03, 2.03], "{name}");
            let shown = |i: usize| image::open(&frames[i].path).unwrap().to_rgb8();
            let dark = |p: &image::Rgb<u8>| p.0.iter().all(|&c| c < 60);
            let light = |p: &image::Rgb<u8>| p.0.iter().all(|&c| c > 220);
            assert!(dark(shown(1).get_pixel(20, 20)) && light(shown(1).get_pixel(110, 70)));
            assert!(light(shown(2).get_pixel(20, 20)) && dark(shown(2).get_pixel(110, 70)));
            assert!(light(shown(3).get_pixel(20, 20)) && light(shown(3).get_pixel(110, 70)));
        }
    }

    #[tokio::test]
    async fn a_canvas_over_the_bound_is_refused_before_decoding() {
        let dir = tempfile::tempdir().unwrap();
        let mut bytes = gif(&recording());
        // The logical screen says 5000x4000: 20 million pixels a frame.
        bytes[6..10].copy_from_slice(&[0x88, 0x13, 0xA0, 0x0F]);
        let path = dir.path().join("huge.gif");
        std::fs::write(&path, bytes).unwrap();
        let err = timeline(&path, &KeyframeOptions::default())
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("5000x4000") && err.contains("3840x2160"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn at_most_the_bounded_number_of_frames_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let frames: Vec<Shown> = (0..media::MAX_ANIMATION_FRAMES + 5)
            .map(|i| {
                let shade = (i % 200) as u8;
                (screen(8, 8, [shade, shade, shade], None), 20)
            })
            .collect();
        let path = dir.path().join("long.gif");
        std::fs::write(&path, gif(&frames)).unwrap();
        let seen = timeline(&path, &KeyframeOptions::default()).await.unwrap();
        assert_eq!(seen.samples, u64::from(media::MAX_ANIMATION_FRAMES));
        // The length is the frames read: up to the last one.
        assert!((seen.sampled_seconds - 0.02 * 2999.0).abs() < 1e-6);
    }
}
