//! Recordings written by the test itself: animated GIF, APNG and WebP with the frames and
//! delays it chooses (through the `image` and `png` encoders; an animated WebP is put together
//! here from the lossless frames `image` writes, as no Rust crate writes one), and a WAV of
//! sound only.

use image::codecs::gif::{GifEncoder, Repeat};
use image::codecs::webp::WebPEncoder;
use image::{Delay, ExtendedColorType, Frame, Rgba, RgbaImage};

/// One frame and how long it is shown, in milliseconds.
pub type Shown = (RgbaImage, u32);

/// A `width` x `height` screen of one colour with a dark box at `(x, y)` of `side` pixels, if
/// any: the frames of a recording that changes where the box appears.
pub fn screen(
    width: u32,
    height: u32,
    colour: [u8; 3],
    boxed: Option<(u32, u32, u32)>,
) -> RgbaImage {
    RgbaImage::from_fn(width, height, |px, py| match boxed {
        Some((x, y, side)) if (x..x + side).contains(&px) && (y..y + side).contains(&py) => {
            Rgba([20, 30, 40, 255])
        }
        _ => Rgba([colour[0], colour[1], colour[2], 255]),
    })
}

/// An animated GIF that plays forever; GIF counts delays in hundredths of a second.
pub fn gif(frames: &[Shown]) -> Vec<u8> {
    let mut bytes = Vec::new();
    {
        let mut encoder = GifEncoder::new_with_speed(&mut bytes, 30);
        encoder.set_repeat(Repeat::Infinite).expect("repeat");
        let frames = frames.iter().map(|(image, ms)| {
            Frame::from_parts(image.clone(), 0, 0, Delay::from_numer_denom_ms(*ms, 1))
        });
        encoder.encode_frames(frames).expect("a GIF");
    }
    bytes
}

/// An APNG (every frame part of the animation, the first also its still).
pub fn apng(frames: &[Shown]) -> Vec<u8> {
    let (width, height) = frames[0].0.dimensions();
    let mut bytes = Vec::new();
    let mut encoder = png::Encoder::new(&mut bytes, width, height);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    encoder
        .set_animated(frames.len() as u32, 0)
        .expect("animated");
    let mut writer = encoder.write_header().expect("a PNG header");
    for (image, ms) in frames {
        writer.set_frame_delay(*ms as u16, 1000).expect("a delay");
        writer.write_image_data(image.as_raw()).expect("a frame");
    }
    writer.finish().expect("an APNG");
    bytes
}

/// An animated WebP: the `VP8X` header with its animation flag, `ANIM`, then one `ANMF` per
/// frame holding the frame's lossless `VP8L` bitstream.
pub fn webp(frames: &[Shown]) -> Vec<u8> {
    let (width, height) = frames[0].0.dimensions();
    let u24 = |v: u32| v.to_le_bytes()[..3].to_vec();
    let mut vp8x = vec![0x02 | 0x10, 0, 0, 0];
    vp8x.extend(u24(width - 1));
    vp8x.extend(u24(height - 1));
    let mut body = b"WEBP".to_vec();
    body.extend(chunk(b"VP8X", &vp8x));
    // White background, played forever.
    body.extend(chunk(b"ANIM", &[255, 255, 255, 255, 0, 0]));
    for (image, ms) in frames {
        let mut still = Vec::new();
        WebPEncoder::new_lossless(&mut still)
            .encode(image.as_raw(), width, height, ExtendedColorType::Rgba8)
            .expect("a WebP frame");
        let mut frame = [u24(0), u24(0), u24(width - 1), u24(height - 1), u24(*ms)].concat();
        // Not blended with the frame before, not disposed.
        frame.push(0x02);
        frame.extend(find_chunk(&still, b"VP8L"));
        body.extend(chunk(b"ANMF", &frame));
    }
    chunk(b"RIFF", &body)
}

/// A RIFF chunk: its id, its size, its data and the padding to an even length.
fn chunk(id: &[u8; 4], data: &[u8]) -> Vec<u8> {
    let mut out = id.to_vec();
    out.extend((data.len() as u32).to_le_bytes());
    out.extend(data);
    if data.len() % 2 == 1 {
        out.push(0);
    }
    out
}

/// The chunk `id` of a still WebP, header included.
fn find_chunk(webp: &[u8], id: &[u8; 4]) -> Vec<u8> {
    let mut pos = 12;
    while pos + 8 <= webp.len() {
        let size = u32::from_le_bytes(webp[pos + 4..pos + 8].try_into().expect("4 bytes")) as usize;
        let end = pos + 8 + size + size % 2;
        if &webp[pos..pos + 4] == id {
            return webp[pos..end.min(webp.len())].to_vec();
        }
        pos = end;
    }
    panic!("no {} chunk in the WebP", String::from_utf8_lossy(id));
}

/// A WAV of `seconds` of a 440 Hz tone: 16-bit mono at 8 kHz, sound and no picture.
pub fn wav(seconds: u32) -> Vec<u8> {
    let rate = 8000u32;
    let samples: Vec<u8> = (0..rate * seconds)
        .flat_map(|n| {
            let t = n as f32 / rate as f32;
            (((t * 440.0 * std::f32::consts::TAU).sin() * 8000.0) as i16).to_le_bytes()
        })
        .collect();
    let mut fmt = 1u16.to_le_bytes().to_vec(); // PCM
    fmt.extend(1u16.to_le_bytes()); // mono
    fmt.extend(rate.to_le_bytes());
    fmt.extend((rate * 2).to_le_bytes());
    fmt.extend(2u16.to_le_bytes());
    fmt.extend(16u16.to_le_bytes());
    let body = [
        b"WAVE".to_vec(),
        chunk(b"fmt ", &fmt),
        chunk(b"data", &samples),
    ]
    .concat();
    chunk(b"RIFF", &body)
}
