//! Pictures for tests, as the bytes of a PNG file.

/// A `width`x`height` picture of one colour.
pub fn solid_png(width: u32, height: u32, rgb: [u8; 3]) -> Vec<u8> {
    png(&image::RgbImage::from_pixel(width, height, image::Rgb(rgb)).into())
}

/// `picture` encoded as PNG.
pub fn png(picture: &image::DynamicImage) -> Vec<u8> {
    let mut bytes = std::io::Cursor::new(Vec::new());
    picture
        .write_to(&mut bytes, image::ImageFormat::Png)
        .expect("a picture in memory encodes as PNG");
    bytes.into_inner()
}
