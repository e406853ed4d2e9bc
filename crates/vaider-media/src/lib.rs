//! Vaider's media: what a file is and whether it may leave the machine (`media`: each
//! container's check), the stills a video is seen through (`keyframes`: decoding, change
//! detection, JPEG encoding), and an image fitted to what a provider takes (`image_fit`).
//! Nothing here talks to a model.

pub mod image_fit;
pub mod keyframes;
pub mod media;
