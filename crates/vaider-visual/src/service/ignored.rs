//! The rectangles a comparison leaves out: those given, and those the screenshots' ignore
//! selectors matched when they were captured.

use std::path::Path;

use super::data::IgnoredRegionData;
use crate::store::Store;

/// The union of the rectangles given and those kept with either screenshot when it was
/// captured with ignore selectors (only for the store's own, unchanged files). A rectangle both
/// captures matched with the same selector is listed once, as "both".
pub(super) fn ignored_regions(
    store: &Store,
    before: &Path,
    after: &Path,
    given: &[crate::IgnoreRegion],
) -> Vec<IgnoredRegionData> {
    let mut all: Vec<IgnoredRegionData> = given
        .iter()
        .map(|r| IgnoredRegionData {
            x: r.x,
            y: r.y,
            width: r.width,
            height: r.height,
            source: "given".into(),
            selector: None,
            screenshot: None,
        })
        .collect();
    let captured = [("before", before), ("after", after)]
        .into_iter()
        .filter_map(|(side, path)| Some((side, store.find_kept(path)?.ignore_regions)));
    for (side, regions) in captured {
        for r in regions {
            let same = |o: &IgnoredRegionData| {
                (o.x, o.y, o.width, o.height) == (r.x, r.y, r.width, r.height)
                    && o.selector.as_deref() == Some(r.selector.as_str())
            };
            match all.iter_mut().find(|o| same(o)) {
                Some(seen) => seen.screenshot = Some("both".into()),
                None => all.push(IgnoredRegionData {
                    x: r.x,
                    y: r.y,
                    width: r.width,
                    height: r.height,
                    source: "selector".into(),
                    selector: Some(r.selector),
                    screenshot: Some(side.into()),
                }),
            }
        }
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{NewScreenshot, SelectorRegion};
    use std::path::PathBuf;

    fn png(width: u32, height: u32, shade: u8) -> Vec<u8> {
        let mut bytes = Vec::new();
        image::RgbaImage::from_pixel(width, height, image::Rgba([shade, shade, shade, 255]))
            .write_to(
                &mut std::io::Cursor::new(&mut bytes),
                image::ImageFormat::Png,
            )
            .unwrap();
        bytes
    }

    fn keep(store: &Store, name: &str, shade: u8, regions: &[(&str, u32)]) -> PathBuf {
        let shot = store
            .add(NewScreenshot {
                name,
                description: "",
                platform: "web",
                png: &png(40, 30, shade),
                timestamp: "2026-11-27T19:00:00.000Z".into(),
                ignore_regions: regions
                    .iter()
                    .map(|&(selector, x)| SelectorRegion {
                        selector: selector.into(),
                        x,
                        y: 2,
                        width: 5,
                        height: 4,
                    })
                    .collect(),
            })
            .unwrap();
        store.png_path(&shot)
    }

    #[test]
    fn ignored_regions_are_the_given_ones_and_both_captures_selectors_once_each() {
        let project = tempfile::tempdir().unwrap();
        let store = Store::in_project(project.path());
        let before = keep(&store, "before", 10, &[("#clock", 1), (".ad", 20)]);
        let after = keep(&store, "after", 20, &[("#clock", 1), ("#clock", 30)]);
        let given = [crate::IgnoreRegion {
            x: 0,
            y: 0,
            width: 3,
            height: 3,
        }];
        let ignored = ignored_regions(&store, &before, &after, &given);
        let seen: Vec<_> = ignored
            .iter()
            .map(|r| {
                (
                    r.x,
                    r.source.as_str(),
                    r.selector.as_deref(),
                    r.screenshot.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            seen,
            [
                (0, "given", None, None),
                (1, "selector", Some("#clock"), Some("both")),
                (20, "selector", Some(".ad"), Some("before")),
                (30, "selector", Some("#clock"), Some("after")),
            ]
        );
    }

    #[test]
    fn a_copy_or_a_changed_file_does_not_carry_the_captures_regions() {
        let project = tempfile::tempdir().unwrap();
        let store = Store::in_project(project.path());
        let kept = keep(&store, "shot", 10, &[("#clock", 1)]);
        // The same name in another folder is not the store's file.
        let elsewhere = project.path().join("copy");
        std::fs::create_dir(&elsewhere).unwrap();
        let copy = elsewhere.join(kept.file_name().unwrap());
        std::fs::copy(&kept, &copy).unwrap();
        assert!(ignored_regions(&store, &copy, &copy, &[]).is_empty());
        assert_eq!(ignored_regions(&store, &kept, &copy, &[]).len(), 1);
        // The store's file, overwritten since it was kept, no longer matches its metadata.
        std::fs::write(&kept, png(40, 30, 99)).unwrap();
        assert!(ignored_regions(&store, &kept, &kept, &[]).is_empty());
    }
}
