//! The desktop adapter on a real X server: the test starts Xvfb and a window manager itself,
//! opens a red window with a known title, and captures the screen and then that window.
//! Run alone with `cargo test -p vaider-capture --test desktop`; names start with `desktop_`.
//!
//! Needs `xvfb` and `evilwm` (apt-get install xvfb evilwm): without them the test fails.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use vaider_capture::{capture_in, Environment, Target};
use x11rb::connection::Connection;
use x11rb::protocol::xproto::{AtomEnum, ConnectionExt, CreateWindowAux, PropMode, WindowClass};
use x11rb::wrapper::ConnectionExt as _;

const SCREEN: (u32, u32) = (1024, 768);
const WINDOW: (u16, u16) = (200, 150);
const TITLE: &str = "vaider-test-window";
const RED: [u8; 4] = [255, 0, 0, 255];

/// Processes the test started, killed when it ends however it ends.
struct Started(Vec<Child>);

impl Drop for Started {
    fn drop(&mut self) {
        for child in self.0.iter_mut().rev() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn installed(program: &str, package: &str) {
    let found = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .any(|dir| dir.join(program).is_file());
    assert!(
        found,
        "{program} is not installed: apt-get install {package}"
    );
}

/// Starts Xvfb on the first free display from :90 up; returns the display name.
fn start_xvfb(started: &mut Started) -> String {
    for number in 90..140 {
        let socket = format!("/tmp/.X11-unix/X{number}");
        if Path::new(&socket).exists() || Path::new(&format!("/tmp/.X{number}-lock")).exists() {
            continue;
        }
        let display = format!(":{number}");
        let screen = format!("{}x{}x24", SCREEN.0, SCREEN.1);
        let mut xvfb = Command::new("Xvfb")
            .args([&display, "-screen", "0", &screen, "-nolisten", "tcp"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("Xvfb starts");
        let deadline = Instant::now() + Duration::from_secs(10);
        while !Path::new(&socket).exists() && Instant::now() < deadline {
            // Another run took this display first: Xvfb exits, try the next number.
            if xvfb.try_wait().ok().flatten().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        if Path::new(&socket).exists() && xvfb.try_wait().ok().flatten().is_none() {
            started.0.push(xvfb);
            return display;
        }
        let _ = xvfb.kill();
        let _ = xvfb.wait();
    }
    panic!("no free X display between :90 and :139");
}

/// Opens a red window titled [`TITLE`]; the connection must stay open for the window to live.
fn open_red_window(display: &str) -> impl Connection {
    let (conn, screen_number) = x11rb::connect(Some(display)).expect("connect to Xvfb");
    let screen = &conn.setup().roots[screen_number];
    let window = conn.generate_id().unwrap();
    let (width, height) = WINDOW;
    conn.create_window(
        screen.root_depth,
        window,
        screen.root,
        100,
        120,
        width,
        height,
        0,
        WindowClass::INPUT_OUTPUT,
        screen.root_visual,
        // 24-bit TrueColor: 0xff0000 is pure red.
        &CreateWindowAux::new().background_pixel(0xff0000),
    )
    .unwrap();
    // xcap reads `_NET_WM_NAME` only; WM_NAME is set too for the window manager.
    let net_wm_name = conn
        .intern_atom(false, b"_NET_WM_NAME")
        .unwrap()
        .reply()
        .unwrap();
    let utf8 = conn
        .intern_atom(false, b"UTF8_STRING")
        .unwrap()
        .reply()
        .unwrap();
    conn.change_property8(
        PropMode::REPLACE,
        window,
        net_wm_name.atom,
        utf8.atom,
        TITLE.as_bytes(),
    )
    .unwrap();
    conn.change_property8(
        PropMode::REPLACE,
        window,
        AtomEnum::WM_NAME,
        AtomEnum::STRING,
        TITLE.as_bytes(),
    )
    .unwrap();
    conn.map_window(window).unwrap();
    conn.flush().unwrap();
    conn
}

fn decode(png: &[u8]) -> image::RgbaImage {
    image::load_from_memory_with_format(png, image::ImageFormat::Png)
        .expect("the shot is a PNG")
        .to_rgba8()
}

/// The smallest rectangle holding every red pixel, as (left, top, width, height).
fn red_box(image: &image::RgbaImage) -> Option<(u32, u32, u32, u32)> {
    let red: Vec<_> = image
        .enumerate_pixels()
        .filter(|(_, _, pixel)| pixel.0 == RED)
        .map(|(x, y, _)| (x, y))
        .collect();
    let left = red.iter().map(|p| p.0).min()?;
    let top = red.iter().map(|p| p.1).min()?;
    let right = red.iter().map(|p| p.0).max()?;
    let bottom = red.iter().map(|p| p.1).max()?;
    Some((left, top, right - left + 1, bottom - top + 1))
}

#[tokio::test]
async fn desktop_screen_and_a_window_by_title_under_xvfb() {
    installed("Xvfb", "xvfb");
    installed("evilwm", "evilwm");
    let mut started = Started(Vec::new());
    let display = start_xvfb(&mut started);
    // xcap connects to the DISPLAY of the process. This file holds a single test, so no other
    // test thread reads the environment while it changes.
    std::env::set_var("DISPLAY", &display);
    std::env::remove_var("WAYLAND_DISPLAY");
    std::env::remove_var("XDG_SESSION_TYPE");
    // Windows are listed through the window manager's _NET_CLIENT_LIST_STACKING.
    // evilwm's default font ("variable") is not in xfonts-base and it exits without one;
    // "fixed" is.
    let wm = Command::new("evilwm")
        .args(["-fn", "fixed"])
        .env("DISPLAY", &display)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("evilwm starts");
    started.0.push(wm);
    let _window = open_red_window(&display);
    let env = Environment::from_process();

    // The window is listed once the window manager has taken it in.
    let by_title = Target::Desktop {
        window: Some("vaider-test".into()),
    };
    // A bound, not a timing claim: on a busy machine the window manager takes a while.
    let deadline = Instant::now() + Duration::from_secs(60);
    let window_shot = loop {
        let started_at = Instant::now();
        match capture_in(&by_title, &env).await {
            Ok(shot) => {
                println!("desktop window capture took {:?}", started_at.elapsed());
                break shot;
            }
            // Until the window manager has started, it has not set _NET_CLIENT_LIST_STACKING
            // and windows cannot be listed at all: that too is waited out.
            Err(_) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(error) => panic!("window capture failed: {error}"),
        }
    };
    assert_eq!(window_shot.platform, "linux");
    assert_eq!((window_shot.width, window_shot.height), (200, 150));
    let window_image = decode(&window_shot.png);
    assert_eq!(window_image.dimensions(), (200, 150));
    assert!(
        window_image.pixels().all(|pixel| pixel.0 == RED),
        "the window shot is not all red"
    );

    let started_at = Instant::now();
    let screen_shot = capture_in(&Target::Desktop { window: None }, &env)
        .await
        .expect("screen capture");
    println!(
        "desktop screen capture ({}x{}) took {:?}",
        SCREEN.0,
        SCREEN.1,
        started_at.elapsed()
    );
    assert_eq!(screen_shot.platform, "linux");
    assert_eq!((screen_shot.width, screen_shot.height), SCREEN);
    let screen = decode(&screen_shot.png);
    assert_eq!(screen.dimensions(), SCREEN);
    let (_, _, width, height) = red_box(&screen).expect("the red window is on the screen");
    assert_eq!((width, height), (200, 150), "the red area on screen");

    // A title nobody has is an error that lists the windows there are.
    let missing = capture_in(
        &Target::Desktop {
            window: Some("no-such-window".into()),
        },
        &env,
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(missing.contains("no-such-window"), "{missing}");
    assert!(missing.contains(TITLE), "{missing}");
}
