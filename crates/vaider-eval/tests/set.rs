//! The shipped set holds what the issue asks of it: at least 40 recordings and 40 pairs, a
//! third of controls, every defect class, and for every item its media, its expectations with
//! a truth, and (for a defect) where it is; a recording's defect time lies inside the video.

use std::path::Path;

use vaider_eval::labels::{self, Kind, Truth, CLASSES};

fn set() -> Vec<labels::Item> {
    labels::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../eval/set")).unwrap()
}

#[test]
fn the_shipped_set_has_its_sizes_classes_and_controls() {
    let items = set();
    let count = |kind: Kind| items.iter().filter(|i| i.kind == kind).count();
    assert!(count(Kind::Recording) >= 40, "{}", count(Kind::Recording));
    assert!(count(Kind::Pair) >= 40, "{}", count(Kind::Pair));
    let controls = items.iter().filter(|i| i.is_control()).count();
    assert!(
        controls * 100 >= items.len() * 30,
        "{controls} of {}",
        items.len()
    );
    for class in CLASSES {
        assert!(
            items.iter().any(|i| i.classes.iter().any(|c| c == class)),
            "no item of {class}"
        );
    }
}

#[test]
fn every_item_has_its_media_expectations_and_place() {
    for item in set() {
        let media = match item.kind {
            Kind::Recording => vec![&item.media],
            Kind::Pair => vec![&item.before, &item.after],
        };
        for name in media {
            assert!(item.path(name).unwrap().is_file(), "{}: {name:?}", item.id);
        }
        if item.is_control() {
            assert!(
                item.expectations.iter().all(|e| e.truth == Truth::Met),
                "{}",
                item.id
            );
            continue;
        }
        let place = item
            .place
            .clone()
            .unwrap_or_else(|| panic!("{}: no place", item.id));
        assert!(place.region.is_some(), "{}", item.id);
        if item.kind == Kind::Recording {
            let time = place.time.unwrap();
            let end = item.duration_s.unwrap();
            assert!(
                0.0 < time.start_s && time.start_s <= time.end_s && time.end_s <= end + 0.1,
                "{}: {time:?}",
                item.id
            );
            assert!(item.expectations.len() >= 4, "{}", item.id);
        }
    }
}
