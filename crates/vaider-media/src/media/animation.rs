//! Animated images (GIF, APNG, animated WebP): their frames counted and their delays added up
//! from the headers alone, without decoding a pixel, so that a check tells a recording from a
//! still. Best effort: a walk that meets something odd stops and reports what it counted (the
//! file's soundness is the container check's business, and the decoder's).

use super::*;

/// An animated image, as its headers describe it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Animation {
    /// Frames in the file (at least 2).
    pub frames: u32,
    /// How long one play lasts, in milliseconds, each delay as browsers show it
    /// ([`shown_ms`]).
    pub duration_ms: u64,
    /// The canvas every frame is drawn on.
    pub width: u32,
    pub height: u32,
}

/// The largest canvas whose frames Vaider decodes: 3840x2160 (4K) pixels. A few canvases are
/// held while a frame is composited and compared with the one before (about 150 MB at this
/// size, whatever the file's length).
pub const MAX_ANIMATION_PIXELS: u64 = 3840 * 2160;
/// Frames of an animation watched at most; the rest (and any past [`MAX_DECODED_PIXELS`]) is
/// left out, and the result says so.
pub const MAX_ANIMATION_FRAMES: u32 = 3000;
/// Pixels decoded for one animation at most (frames times canvas), which bounds the time a
/// long, large GIF takes: 1,085 frames of 1280x720, 120 of 4K.
pub const MAX_DECODED_PIXELS: u64 = 1_000_000_000;

impl Animation {
    /// The frames Vaider watches: all of them, up to [`MAX_ANIMATION_FRAMES`] and
    /// [`MAX_DECODED_PIXELS`].
    pub fn frames_watched(&self) -> u32 {
        let canvas = (u64::from(self.width) * u64::from(self.height)).max(1);
        let by_pixels = u32::try_from(MAX_DECODED_PIXELS / canvas).unwrap_or(u32::MAX);
        self.frames.min(MAX_ANIMATION_FRAMES).min(by_pixels.max(1))
    }
}

/// How long a frame is shown, as browsers play an animation: a delay of 10 ms or less is
/// shown for 100 ms (Chromium's and Firefox's rule, for GIF, APNG and WebP alike), so a GIF
/// whose frames say 0 plays on Vaider's clock as it does in a browser.
pub fn shown_ms(delay_ms: u64) -> u64 {
    if delay_ms <= 10 {
        100
    } else {
        delay_ms
    }
}

/// The animation in a GIF, PNG or WebP with more than one frame; None for a still (or any
/// other format).
pub(super) fn animation_of(src: &mut Source, format: &str) -> Option<Animation> {
    let mut count = Count::default();
    let mut budget = Budget(MAX_ELEMENTS);
    let (width, height) = canvas(src, format)?;
    // Running out of budget or meeting an odd block ends the count where it is.
    let _ = match format {
        "GIF" => gif_frames(src, &mut count, &mut budget),
        "PNG" => apng_frames(src, &mut count, &mut budget),
        "WebP" => webp_frames(src, &mut count, &mut budget),
        _ => return None,
    };
    (count.frames >= 2).then_some(Animation {
        frames: count.frames,
        duration_ms: count.duration_ms,
        width,
        height,
    })
}

/// The canvas size in the header: GIF's logical screen, PNG's IHDR, WebP's VP8X.
fn canvas(src: &mut Source, format: &str) -> Option<(u32, u32)> {
    let (head, _) = src.small::<32>(0).ok()?;
    let u24 = |b: &[u8]| u32::from(b[0]) | u32::from(b[1]) << 8 | u32::from(b[2]) << 16;
    match format {
        "GIF" => Some((
            u32::from(u16::from_le_bytes([head[6], head[7]])),
            u32::from(u16::from_le_bytes([head[8], head[9]])),
        )),
        "PNG" => Some((be_u32(&head[16..20]), be_u32(&head[20..24]))),
        _ => Some((u24(&head[24..27]) + 1, u24(&head[27..30]) + 1)),
    }
}

#[derive(Default)]
struct Count {
    frames: u32,
    duration_ms: u64,
}

impl Count {
    fn frame(&mut self, delay_ms: u64) {
        self.frames = self.frames.saturating_add(1);
        self.duration_ms = self.duration_ms.saturating_add(shown_ms(delay_ms));
    }
}

/// A GIF's blocks: each image descriptor is a frame, shown for the delay of the graphic
/// control extension before it (in hundredths of a second).
fn gif_frames(src: &mut Source, count: &mut Count, budget: &mut Budget) -> Result<(), Fault> {
    let (screen, n) = src.small::<13>(0)?;
    if n < 13 {
        return bad("short header");
    }
    let mut pos = 13 + color_table(screen[10]);
    let mut delay_ms = 0;
    loop {
        budget.spend()?;
        let (block, _) = src.small::<8>(pos)?;
        match block[0] {
            0x21 if block[1] == 0xF9 => {
                delay_ms = u64::from(u16::from_le_bytes([block[4], block[5]])) * 10;
                pos = skip_sub_blocks(src, pos + 2, budget)?;
            }
            0x21 => pos = skip_sub_blocks(src, pos + 2, budget)?,
            0x2C => {
                let (descriptor, n) = src.small::<10>(pos)?;
                if n < 10 {
                    return bad("short image descriptor");
                }
                count.frame(std::mem::take(&mut delay_ms));
                // The descriptor, its colour table, the LZW code size, then the data.
                pos = skip_sub_blocks(src, pos + 10 + color_table(descriptor[9]) + 1, budget)?;
            }
            _ => return Ok(()),
        }
    }
}

/// Bytes of the colour table a GIF's packed field announces.
fn color_table(packed: u8) -> u64 {
    if packed & 0x80 == 0 {
        0
    } else {
        3 << ((packed & 7) + 1)
    }
}

/// Where the sub-blocks starting at `pos` end (after their zero-length terminator).
fn skip_sub_blocks(src: &mut Source, mut pos: u64, budget: &mut Budget) -> Result<u64, Fault> {
    loop {
        budget.spend()?;
        let (size, n) = src.small::<1>(pos)?;
        if n == 0 {
            return bad("the file ends inside a block");
        }
        pos += 1 + u64::from(size[0]);
        if size[0] == 0 {
            return Ok(pos);
        }
    }
}

/// An APNG's frame controls (`fcTL`), each with its delay as a fraction of a second.
fn apng_frames(src: &mut Source, count: &mut Count, budget: &mut Budget) -> Result<(), Fault> {
    let mut pos = PNG_SIGNATURE.len() as u64;
    while pos < src.len {
        budget.spend()?;
        let (head, n) = src.small::<8>(pos)?;
        if n < 8 {
            return bad("short chunk");
        }
        let length = u64::from(be_u32(&head[0..4]));
        match &head[4..8] {
            b"fcTL" => {
                let (control, _) = src.small::<26>(pos + 8)?;
                let numerator = u64::from(u16::from_be_bytes([control[20], control[21]]));
                let denominator = match u16::from_be_bytes([control[22], control[23]]) {
                    0 => 100,
                    d => u64::from(d),
                };
                count.frame(numerator * 1000 / denominator);
            }
            b"IEND" => return Ok(()),
            _ => {}
        }
        pos += 12 + length;
    }
    Ok(())
}

/// An animated WebP's frames (`ANMF` chunks), each with its duration in milliseconds.
fn webp_frames(src: &mut Source, count: &mut Count, budget: &mut Budget) -> Result<(), Fault> {
    let (head, _) = src.small::<21>(12)?;
    // Only an extended WebP (`VP8X`) with its animation flag holds frames.
    if &head[0..4] != b"VP8X" || head[8] & 0x02 == 0 {
        return Ok(());
    }
    let end = (8 + u64::from(le_u32(&src.small::<4>(4)?.0))).min(src.len);
    let mut pos = 12;
    while pos + 8 <= end {
        budget.spend()?;
        let (chunk, _) = src.small::<24>(pos)?;
        let size = u64::from(le_u32(&chunk[4..8]));
        if &chunk[0..4] == b"ANMF" {
            let duration =
                u64::from(chunk[20]) | u64::from(chunk[21]) << 8 | u64::from(chunk[22]) << 16;
            count.frame(duration);
        }
        pos += 8 + size + (size & 1);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use vaider_test_support::animations::{apng, gif, screen, webp, Shown};

    fn frames() -> Vec<Shown> {
        let white = [255, 255, 255];
        vec![
            (screen(64, 48, white, None), 500),
            (screen(64, 48, white, Some((4, 4, 10))), 250),
            // Shown as browsers do: 0 ms plays as 100 ms.
            (screen(64, 48, white, Some((30, 20, 10))), 0),
            (screen(64, 48, white, None), 1000),
        ]
    }

    fn write(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }

    #[test]
    fn each_animated_format_is_counted_with_its_delays_as_browsers_play_them() {
        let dir = tempfile::tempdir().unwrap();
        let want = Animation {
            frames: 4,
            duration_ms: 500 + 250 + 100 + 1000,
            width: 64,
            height: 48,
        };
        for (name, bytes, mime) in [
            ("a.gif", gif(&frames()), "image/gif"),
            ("a.png", apng(&frames()), "image/png"),
            ("a.webp", webp(&frames()), "image/webp"),
        ] {
            let path = write(dir.path(), name, &bytes);
            let info = inspect(&path, MAX_MEDIA_BYTES, None).unwrap();
            assert_eq!(
                (info.kind, info.mime_type),
                (MediaKind::Image, mime),
                "{name}"
            );
            assert_eq!(info.animation, Some(want), "{name}");
            assert!(info.is_recording());
            // A video tool takes it as a recording; an image tool as a picture.
            for expected in [MediaKind::Video, MediaKind::Image] {
                let again = inspect(&path, MAX_MEDIA_BYTES, Some(expected)).unwrap();
                assert_eq!(again, info, "{name}");
            }
            assert_eq!(want.frames_watched(), 4);
        }
    }

    #[test]
    fn a_still_is_no_recording_and_a_video_tool_says_what_it_takes() {
        let dir = tempfile::tempdir().unwrap();
        let one = &frames()[..1];
        for (name, bytes) in [
            ("still.gif", gif(one)),
            ("still.png", apng(one)),
            ("still.webp", webp(one)),
        ] {
            let path = write(dir.path(), name, &bytes);
            let info = inspect(&path, MAX_MEDIA_BYTES, Some(MediaKind::Image)).unwrap();
            assert_eq!(info.animation, None, "{name}");
            let err = inspect(&path, MAX_MEDIA_BYTES, Some(MediaKind::Video)).unwrap_err();
            assert!(
                matches!(err, MediaError::WrongKind { .. }),
                "{name}: {err:?}"
            );
            let msg = err.to_string();
            assert!(
                msg.contains("a video is needed") && msg.contains("animated GIF, APNG or WebP"),
                "{msg}"
            );
        }
    }

    #[test]
    fn the_frames_watched_are_bounded_by_count_and_by_pixels() {
        let long = Animation {
            frames: 100_000,
            duration_ms: 10_000_000,
            width: 320,
            height: 240,
        };
        assert_eq!(long.frames_watched(), MAX_ANIMATION_FRAMES);
        let large = Animation {
            width: 3840,
            height: 2160,
            ..long
        };
        assert_eq!(
            u64::from(large.frames_watched()),
            MAX_DECODED_PIXELS / (3840 * 2160)
        );
    }
}
