//! Vaider's local pixel diff of two screenshots: pixelmatch's changed-pixel count (equal to the
//! npm package's), the changed regions as numbered boxes, and the diff, annotation and heat-map
//! images that an agent, or the vision model after it, looks at.

pub mod diff;
pub mod mask;
pub mod regions;

pub use diff::{diff_images, AlphaBackground, DiffOptions, PixelDiff, SizeChange};
pub use mask::ChangedMask;
pub use regions::{find_regions, Region, RegionOptions};
