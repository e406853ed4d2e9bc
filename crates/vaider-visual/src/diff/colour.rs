//! The colour maths of the diff, pixelmatch's to the bit: the YIQ colour difference, the
//! brightness difference the anti-aliasing detector reads, and the same two for several opaque
//! pixels at once in `f64` lanes the compiler vectorises. The operation order is pixelmatch's
//! everywhere, so every result equals the scalar one and pixelmatch's own.

use super::AlphaBackground;

/// The colour behind a semi-transparent pixel at byte offset `k`. pixelmatch passes the byte
/// offset (a multiple of 4), so its red channel is always 48: kept, for equal counts.
pub(super) fn background_at(k: usize, background: AlphaBackground) -> [i32; 3] {
    match background {
        AlphaBackground::White => [255; 3],
        AlphaBackground::Checkerboard => {
            let k_float = k as f64;
            let red = 48 + 159 * (k % 2) as i32;
            let green = 48 + 159 * ((k_float / 1.618033988749895) as u64 % 2) as i32;
            let blue = 48 + 159 * ((k_float / 2.618033988749895) as u64 % 2) as i32;
            [red, green, blue]
        }
    }
}

/// The channel differences, blended onto the background when either pixel is transparent.
#[inline]
fn channel_deltas(p1: [u8; 4], p2: [u8; 4], k: usize, background: AlphaBackground) -> [f64; 3] {
    let [r1, g1, b1, a1] = p1.map(i32::from);
    let [r2, g2, b2, a2] = p2.map(i32::from);
    if a1 < 255 || a2 < 255 {
        let da = a1 - a2;
        let [rb, gb, bb] = background_at(k, background);
        [
            f64::from(r1 * a1 - r2 * a2 - rb * da) / 255.0,
            f64::from(g1 * a1 - g2 * a2 - gb * da) / 255.0,
            f64::from(b1 * a1 - b2 * a2 - bb * da) / 255.0,
        ]
    } else {
        [f64::from(r1 - r2), f64::from(g1 - g2), f64::from(b1 - b2)]
    }
}

/// pixelmatch's `colorDelta`: the squared YIQ distance (Kotsarenko and Ramos), negative when
/// the second pixel is the brighter... as pixelmatch encodes it: negative when `y > 0`.
/// The operation order is pixelmatch's, so the floating-point result is bit-for-bit the same.
#[inline]
pub(super) fn colour_delta(p1: [u8; 4], p2: [u8; 4], k: usize, background: AlphaBackground) -> f64 {
    let [dr, dg, db] = channel_deltas(p1, p2, k, background);
    let y = dr * 0.29889531 + dg * 0.58662247 + db * 0.11448223;
    let i = dr * 0.59597799 - dg * 0.27417610 - db * 0.32180189;
    let q = dr * 0.21147017 - dg * 0.52261711 + db * 0.31114694;
    let delta = 0.5053 * y * y + 0.299 * i * i + 0.1957 * q * q;
    if y > 0.0 {
        -delta
    } else {
        delta
    }
}

/// Pixels whose colour deltas are computed together, in `f64` lanes as pixelmatch's numbers
/// are: the compiler turns each loop over them into vector instructions, two or more lanes an
/// instruction. Eight: one cache line of pixels, few enough that a lone change costs little.
pub(super) const LANES: usize = 8;

/// `colour_delta` of up to `LANES` pairs of opaque pixels (RGBA bytes, pixel by pixel), one
/// lane each; `None` when a pixel is not opaque (its blending depends on its position, left to
/// `colour_delta`). The operations and their order are `colour_delta`'s, lane by lane, so each
/// result is bit for bit the scalar one (no fused multiply-add: Rust never contracts).
#[inline]
pub(super) fn opaque_deltas(before: &[u8], after: &[u8]) -> Option<[f64; LANES]> {
    // Missing pixels (a short chunk) are opaque white in both: a delta of 0, never read.
    let (mut a, mut b) = ([255u8; LANES * 4], [255u8; LANES * 4]);
    let n = before.len().min(after.len()).min(LANES * 4);
    a[..n].copy_from_slice(&before[..n]);
    b[..n].copy_from_slice(&after[..n]);
    let mut opaque = 255u8;
    for lane in 0..LANES {
        opaque &= a[lane * 4 + 3] & b[lane * 4 + 3];
    }
    if opaque != 255 {
        return None;
    }
    let channel = |c: usize| -> [f64; LANES] {
        std::array::from_fn(|lane| {
            f64::from(i32::from(a[lane * 4 + c]) - i32::from(b[lane * 4 + c]))
        })
    };
    let (dr, dg, db) = (channel(0), channel(1), channel(2));
    let mut deltas = [0.0; LANES];
    for lane in 0..LANES {
        let (dr, dg, db) = (dr[lane], dg[lane], db[lane]);
        let y = dr * 0.29889531 + dg * 0.58662247 + db * 0.11448223;
        let i = dr * 0.59597799 - dg * 0.27417610 - db * 0.32180189;
        let q = dr * 0.21147017 - dg * 0.52261711 + db * 0.31114694;
        let delta = 0.5053 * y * y + 0.299 * i * i + 0.1957 * q * q;
        deltas[lane] = if y > 0.0 { -delta } else { delta };
    }
    Some(deltas)
}

/// The eight neighbours of a 3x3 block, as (column, row) offsets plus one, in pixelmatch's
/// order: x outer, y inner, the centre left out.
pub(super) const NEIGHBOURS: [(usize, usize); 8] = [
    (0, 0),
    (0, 1),
    (0, 2),
    (1, 0),
    (1, 2),
    (2, 0),
    (2, 1),
    (2, 2),
];

/// `brightness_delta` of the centre of an opaque 3x3 block against each neighbour, in
/// `NEIGHBOURS` order, one lane each. Opaque, an equal neighbour's channel deltas are 0 and so
/// its delta is the 0.0 `brightness_delta` returns for it; the rest is its formula, in its
/// order, lane by lane.
#[inline]
pub(super) fn opaque_brightness_deltas(around: &[[u8; 4]; 9]) -> [f64; 8] {
    let centre = around[4].map(i32::from);
    let neighbour = |n: usize| {
        let (dx, dy) = NEIGHBOURS[n];
        around[dx * 3 + dy].map(i32::from)
    };
    let channel =
        |c: usize| -> [f64; 8] { std::array::from_fn(|n| f64::from(centre[c] - neighbour(n)[c])) };
    let (dr, dg, db) = (channel(0), channel(1), channel(2));
    std::array::from_fn(|n| dr[n] * 0.29889531 + dg[n] * 0.58662247 + db[n] * 0.11448223)
}

/// pixelmatch's `brightnessDelta`: the Y part alone, for the anti-aliasing detector.
#[inline]
pub(super) fn brightness_delta(
    centre: [u8; 4],
    other: [u8; 4],
    k: usize,
    background: AlphaBackground,
) -> f64 {
    if centre == other {
        return 0.0;
    }
    let [dr, dg, db] = channel_deltas(centre, other, k, background);
    dr * 0.29889531 + dg * 0.58662247 + db * 0.11448223
}
