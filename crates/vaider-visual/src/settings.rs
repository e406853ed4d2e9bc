//! The comparison options as every door (MCP, REST, CLI) takes them from a user or an agent,
//! with pixelmatch's and odiff's names and meanings, checked in one place so that each door
//! refuses the same values with the same words.

use serde::{Deserialize, Serialize};

use crate::diff::IgnoreRegion;
use crate::error::{Result, VisualError};
use crate::CompareOptions;

/// The most ignore regions one comparison takes: each is checked on every changed pixel's row.
pub const MAX_IGNORE_REGIONS: usize = 1000;

/// What a door was given; `None` (or empty) keeps the default.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CompareSettings {
    /// The noise tolerance: a merged region with fewer changed pixels is dropped.
    pub min_region_pixels: Option<u64>,
    /// A blur (sigma, pixels) on both images before the diff.
    pub blur: Option<f32>,
    /// pixelmatch's `threshold` (odiff's `--threshold`), from 0 to 1.
    pub threshold: Option<f64>,
    /// pixelmatch's `includeAA` (odiff's `--antialiasing` is its opposite): count
    /// anti-aliased pixels as changes too.
    pub include_anti_aliasing: Option<bool>,
    /// pixelmatch's `alpha`: the opacity of the faded before-image in the diff image, 0 to 1.
    pub alpha: Option<f64>,
    /// pixelmatch's `diffColor` (odiff's `--diff-color`), as `#rrggbb`.
    pub diff_color: Option<String>,
    /// pixelmatch's `diffColorAlt`: the colour of changed pixels that got darker.
    pub diff_color_alt: Option<String>,
    /// pixelmatch's `aaColor`: the colour of anti-aliased pixels.
    pub aa_color: Option<String>,
    /// odiff's ignore regions, as rectangles.
    pub ignore_regions: Vec<IgnoreRegion>,
}

impl CompareOptions {
    /// The options a door was given, checked: each error names the option, its range and its
    /// default.
    pub fn from_settings(settings: &CompareSettings) -> Result<Self> {
        let mut options =
            CompareOptions::with_noise_tolerance(settings.min_region_pixels, settings.blur)?;
        let diff = &mut options.diff;
        if let Some(threshold) = settings.threshold {
            diff.threshold = unit("threshold", threshold, "0.1 (pixelmatch's and odiff's)")?;
        }
        if let Some(include) = settings.include_anti_aliasing {
            diff.include_anti_aliasing = include;
        }
        if let Some(alpha) = settings.alpha {
            diff.faded_opacity = unit("alpha", alpha, "0.1 (pixelmatch's)")?;
        }
        if let Some(colour) = &settings.diff_color {
            diff.diff_colour = parse_colour("diff_color", colour)?;
        }
        if let Some(colour) = &settings.diff_color_alt {
            diff.diff_colour_alt = Some(parse_colour("diff_color_alt", colour)?);
        }
        if let Some(colour) = &settings.aa_color {
            diff.anti_alias_colour = parse_colour("aa_color", colour)?;
        }
        diff.ignore = check_ignore_regions(&settings.ignore_regions)?;
        Ok(options)
    }
}

fn unit(name: &str, value: f64, default: &str) -> Result<f64> {
    if (0.0..=1.0).contains(&value) {
        Ok(value)
    } else {
        Err(VisualError::Option(format!(
            "{name} must be from 0 to 1, not {value}; the default is {default}"
        )))
    }
}

/// `#rrggbb` or `rrggbb`, as odiff's `--diff-color` takes it.
pub fn parse_colour(name: &str, text: &str) -> Result<[u8; 3]> {
    let hex = text.trim().trim_start_matches('#');
    let channel = |at: usize| {
        hex.get(at..at + 2)
            .and_then(|pair| u8::from_str_radix(pair, 16).ok())
    };
    match (hex.len(), channel(0), channel(2), channel(4)) {
        (6, Some(red), Some(green), Some(blue)) => Ok([red, green, blue]),
        _ => Err(VisualError::Option(format!(
            "{name} must be a colour as #rrggbb (e.g. #ff0000, pixelmatch's red), not {text:?}"
        ))),
    }
}

fn check_ignore_regions(regions: &[IgnoreRegion]) -> Result<Vec<IgnoreRegion>> {
    if regions.len() > MAX_IGNORE_REGIONS {
        return Err(VisualError::Option(format!(
            "ignore_regions takes at most {MAX_IGNORE_REGIONS} rectangles, not {}",
            regions.len()
        )));
    }
    if let Some(empty) = regions.iter().find(|r| r.width == 0 || r.height == 0) {
        return Err(VisualError::Option(format!(
            "ignore_regions: the rectangle at x {}, y {} is {}x{}; width and height must be at \
             least 1 (odiff's x1:y1-x2:y2 is x = x1, y = y1, width = x2 - x1 + 1, height = y2 - \
             y1 + 1)",
            empty.x, empty.y, empty.width, empty.height
        )));
    }
    Ok(regions.to_vec())
}

/// odiff's `--ignore` form, `x1:y1-x2:y2` with inclusive corners, as a rectangle.
pub fn parse_odiff_region(text: &str) -> Result<IgnoreRegion> {
    let refuse = || {
        VisualError::Option(format!(
            "an ignore region is x1:y1-x2:y2 (odiff's form, corners included, x2 >= x1, y2 >= \
             y1), e.g. 0:0-99:49, not {text:?}"
        ))
    };
    let (first, second) = text.trim().split_once('-').ok_or_else(refuse)?;
    let corner = |part: &str| -> Option<(u32, u32)> {
        let (x, y) = part.split_once(':')?;
        Some((x.trim().parse().ok()?, y.trim().parse().ok()?))
    };
    let ((x1, y1), (x2, y2)) = (
        corner(first).ok_or_else(refuse)?,
        corner(second).ok_or_else(refuse)?,
    );
    if x2 < x1 || y2 < y1 {
        return Err(refuse());
    }
    Ok(IgnoreRegion {
        x: x1,
        y: y1,
        width: x2 - x1 + 1,
        height: y2 - y1 + 1,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_option_reaches_the_diff() {
        let settings = CompareSettings {
            threshold: Some(0.25),
            include_anti_aliasing: Some(true),
            alpha: Some(0.5),
            diff_color: Some("#00ff7f".into()),
            diff_color_alt: Some("0000FF".into()),
            aa_color: Some("#123456".into()),
            ignore_regions: vec![IgnoreRegion {
                x: 1,
                y: 2,
                width: 3,
                height: 4,
            }],
            ..CompareSettings::default()
        };
        let diff = CompareOptions::from_settings(&settings).unwrap().diff;
        assert_eq!(diff.threshold, 0.25);
        assert!(diff.include_anti_aliasing);
        assert_eq!(diff.faded_opacity, 0.5);
        assert_eq!(diff.diff_colour, [0, 255, 127]);
        assert_eq!(diff.diff_colour_alt, Some([0, 0, 255]));
        assert_eq!(diff.anti_alias_colour, [0x12, 0x34, 0x56]);
        assert_eq!(diff.ignore.len(), 1);
        assert_eq!(
            CompareOptions::from_settings(&CompareSettings::default()).unwrap(),
            CompareOptions::default()
        );
    }

    #[test]
    fn bad_values_are_refused_with_the_range() {
        let refused = |settings: CompareSettings| {
            CompareOptions::from_settings(&settings)
                .unwrap_err()
                .to_string()
        };
        let text = refused(CompareSettings {
            threshold: Some(1.5),
            ..CompareSettings::default()
        });
        assert!(text.contains("threshold must be from 0 to 1"), "{text}");
        let text = refused(CompareSettings {
            alpha: Some(f64::NAN),
            ..CompareSettings::default()
        });
        assert!(text.contains("alpha must be from 0 to 1"), "{text}");
        let text = refused(CompareSettings {
            diff_color: Some("red".into()),
            ..CompareSettings::default()
        });
        assert!(
            text.contains("diff_color must be a colour as #rrggbb"),
            "{text}"
        );
        let text = refused(CompareSettings {
            ignore_regions: vec![IgnoreRegion {
                x: 0,
                y: 0,
                width: 0,
                height: 5,
            }],
            ..CompareSettings::default()
        });
        assert!(text.contains("at least 1"), "{text}");
    }

    #[test]
    fn odiff_regions_are_read_with_their_corners_included() {
        assert_eq!(
            parse_odiff_region("10:20-19:24").unwrap(),
            IgnoreRegion {
                x: 10,
                y: 20,
                width: 10,
                height: 5
            }
        );
        assert_eq!(parse_odiff_region("3:3-3:3").unwrap().width, 1);
        for bad in ["", "1:2", "5:5-4:9", "a:b-c:d", "1:2-3", "-1:0-2:2"] {
            assert!(parse_odiff_region(bad).is_err(), "{bad}");
        }
    }
}
