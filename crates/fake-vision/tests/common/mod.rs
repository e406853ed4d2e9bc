//! Helpers for the fake-vision protocol tests: real HTTP on loopback with reqwest, the shared
//! test media, and tiny hand-made image headers for the formats and sizes the media lack.

#![allow(dead_code)]

use base64::Engine;
use reqwest::Response;
use serde_json::Value;
use sha2::{Digest, Sha256};

pub const MEDIA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/media");

pub fn media(name: &str) -> Vec<u8> {
    let path = format!("{MEDIA}/{name}");
    std::fs::read(&path).unwrap_or_else(|e| panic!("read {path}: {e}"))
}

pub fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

pub fn data_url(mime: &str, bytes: &[u8]) -> String {
    format!("data:{mime};base64,{}", b64(bytes))
}

pub fn sha_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// A PNG signature and IHDR for `w`x`h`, padded with `extra` zero bytes (the fakes read
/// headers only, as they need no pixels to check formats and sizes).
pub fn png(w: u32, h: u32, extra: usize) -> Vec<u8> {
    let mut v = b"\x89PNG\r\n\x1a\n".to_vec();
    v.extend_from_slice(&13u32.to_be_bytes());
    v.extend_from_slice(b"IHDR");
    v.extend_from_slice(&w.to_be_bytes());
    v.extend_from_slice(&h.to_be_bytes());
    v.extend_from_slice(&[8, 2, 0, 0, 0]);
    v.extend_from_slice(&[0; 4]);
    v.resize(v.len() + extra, 0);
    v
}

/// A baseline JPEG header (JFIF, then a start-of-frame) for `w`x`h`.
pub fn jpeg(w: u16, h: u16) -> Vec<u8> {
    let mut v = vec![0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10];
    v.extend_from_slice(b"JFIF\0\x01\x01\0\0\x01\0\x01\0\0");
    v.extend_from_slice(&[0xFF, 0xC0, 0x00, 0x11, 0x08]);
    v.extend_from_slice(&h.to_be_bytes());
    v.extend_from_slice(&w.to_be_bytes());
    v.extend_from_slice(&[0x03, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]);
    v
}

/// A lossless WebP header for `w`x`h`.
pub fn webp(w: u32, h: u32) -> Vec<u8> {
    let mut v = b"RIFF\x1a\0\0\0WEBPVP8L\x0d\0\0\0\x2F".to_vec();
    v.extend_from_slice(&((w - 1) | ((h - 1) << 14)).to_le_bytes());
    v.extend_from_slice(&[0; 8]);
    v
}

pub fn bmp() -> Vec<u8> {
    let mut v = b"BM".to_vec();
    v.resize(64, 0);
    v
}

pub async fn json_of(resp: Response) -> (u16, reqwest::header::HeaderMap, Value) {
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let text = resp.text().await.expect("body");
    let value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"));
    (status, headers, value)
}
