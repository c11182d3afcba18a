//! A screen of the test's own and input given to it as a person gives it: an Xvfb server started
//! for the test (so that nothing reaches the desktop the tests run from), and key presses and
//! pointer motion sent through the XTEST extension, which the server takes as a real keyboard's
//! and mouse's. libX11 and libXtst are loaded when the test runs, through `x11-dl` (which winit
//! already builds); a machine without them, or without Xvfb, skips the tests that need them.

#![allow(dead_code, unused_imports)]

use std::ffi::{CStr, CString};
use std::os::raw::{c_int, c_uint, c_ulong};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use x11_dl::xlib::{self, Xlib};
use x11_dl::xtest::Xf86vmode as Xtst;

pub use x11_dl::keysym::{XK_Control_L, XK_Return, XK_r, XK_z};

/// An Xvfb server, stopped when dropped.
pub struct Screen {
    server: Child,
    /// `:N`, for `DISPLAY`.
    pub display: String,
}

impl Screen {
    /// Starts Xvfb on the first free display from :140, `width × height`; `None` (with the reason
    /// printed) when Xvfb is not installed or does not start within 20 s.
    pub fn start(width: u32, height: u32) -> Option<Screen> {
        if !super::has_program("Xvfb") {
            eprintln!("skipped: no Xvfb (Debian package xvfb)");
            return None;
        }
        let number = (140..240).find(|n| {
            !Path::new(&format!("/tmp/.X11-unix/X{n}")).exists() && !Path::new(&format!("/tmp/.X{n}-lock")).exists()
        })?;
        let display = format!(":{number}");
        let server = Command::new("Xvfb")
            .args([
                &display,
                "-screen",
                "0",
                &format!("{width}x{height}x24"),
                "-nolisten",
                "tcp",
                // By default the server resets when its last client leaves, and a connection made
                // during the reset is refused: the readiness probe below is such a client.
                "-noreset",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let screen = Screen { server, display };
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(20) {
            if Path::new(&format!("/tmp/.X11-unix/X{number}")).exists() && Input::open(&screen.display).is_some() {
                return Some(screen);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        eprintln!("skipped: Xvfb did not start on {}", screen.display);
        None
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

/// A connection to an X server that sends it fake input.
pub struct Input {
    xlib: Xlib,
    xtst: Xtst,
    display: *mut xlib::Display,
}

/// A top-level window on the screen: its id and where it is.
#[derive(Debug, Clone, Copy)]
pub struct Placed {
    pub window: c_ulong,
    pub x: i32,
    pub y: i32,
    pub width: i32,
    pub height: i32,
}

impl Input {
    /// Connects to `display`; `None` when libX11 or libXtst is missing or the server refuses.
    pub fn open(display: &str) -> Option<Input> {
        let xlib = Xlib::open().ok()?;
        let xtst = Xtst::open().ok()?;
        let name = CString::new(display).ok()?;
        // SAFETY: `name` is a NUL-terminated string that outlives the call.
        let display = unsafe { (xlib.XOpenDisplay)(name.as_ptr()) };
        if display.is_null() {
            return None;
        }
        Some(Input { xlib, xtst, display })
    }

    /// The mapped top-level window whose name contains `name`, if there is one.
    pub fn find_window(&self, name: &str) -> Option<Placed> {
        let mut root_return = 0;
        let mut parent = 0;
        let mut children: *mut c_ulong = std::ptr::null_mut();
        let mut count: c_uint = 0;
        // SAFETY: the display is open; every out-pointer points at a local of the right type.
        let listed = unsafe {
            let root = (self.xlib.XDefaultRootWindow)(self.display);
            (self.xlib.XQueryTree)(
                self.display,
                root,
                &mut root_return,
                &mut parent,
                &mut children,
                &mut count,
            )
        };
        if listed == 0 || children.is_null() {
            return None;
        }
        // SAFETY: XQueryTree returned `count` window ids at `children`, freed below.
        let windows = unsafe { std::slice::from_raw_parts(children, count as usize) }.to_vec();
        // SAFETY: `children` came from XQueryTree and is freed once.
        unsafe { (self.xlib.XFree)(children.cast()) };
        windows.into_iter().find_map(|window| {
            let mut title: *mut std::os::raw::c_char = std::ptr::null_mut();
            // SAFETY: the display is open and `title` is a local out-pointer.
            let named = unsafe { (self.xlib.XFetchName)(self.display, window, &mut title) };
            if named == 0 || title.is_null() {
                return None;
            }
            // SAFETY: XFetchName returned a NUL-terminated string, freed right after it is copied.
            let text = unsafe { CStr::from_ptr(title) }.to_string_lossy().into_owned();
            // SAFETY: `title` came from XFetchName and is freed once.
            unsafe { (self.xlib.XFree)(title.cast()) };
            if !text.contains(name) {
                return None;
            }
            // SAFETY: the attributes are plain data the call fills in whole.
            let mut attributes: xlib::XWindowAttributes = unsafe { std::mem::zeroed() };
            // SAFETY: the display is open and `attributes` is a local the call fills in.
            let got = unsafe { (self.xlib.XGetWindowAttributes)(self.display, window, &mut attributes) };
            (got != 0 && attributes.map_state == xlib::IsViewable).then_some(Placed {
                window,
                x: attributes.x,
                y: attributes.y,
                width: attributes.width,
                height: attributes.height,
            })
        })
    }

    /// Gives `window` the keyboard, as clicking its title bar would under a window manager.
    pub fn focus(&self, window: c_ulong) {
        // SAFETY: the display is open; an unknown window only makes the server report an error.
        unsafe {
            (self.xlib.XSetInputFocus)(self.display, window, xlib::RevertToParent, xlib::CurrentTime);
            (self.xlib.XSync)(self.display, xlib::False);
        }
    }

    /// Moves the pointer to `(x, y)` on the screen.
    pub fn move_to(&self, x: i32, y: i32) {
        // SAFETY: the display is open; screen -1 is "the pointer's screen".
        unsafe {
            (self.xtst.XTestFakeMotionEvent)(self.display, -1, x as c_int, y as c_int, 0);
            (self.xlib.XSync)(self.display, xlib::False);
        }
    }

    /// Presses and releases the key of `keysym`, holding `held` (modifier keysyms) meanwhile.
    pub fn key(&self, held: &[c_uint], keysym: c_uint) {
        let code = |keysym: c_uint| {
            // SAFETY: the display is open.
            c_uint::from(unsafe { (self.xlib.XKeysymToKeycode)(self.display, c_ulong::from(keysym)) })
        };
        let press = |code: c_uint, down: bool| {
            // SAFETY: the display is open; a keycode the server does not have is ignored by it.
            unsafe { (self.xtst.XTestFakeKeyEvent)(self.display, code, c_int::from(down), 0) };
        };
        for &modifier in held {
            press(code(modifier), true);
        }
        press(code(keysym), true);
        press(code(keysym), false);
        for &modifier in held.iter().rev() {
            press(code(modifier), false);
        }
        // SAFETY: the display is open.
        unsafe { (self.xlib.XSync)(self.display, xlib::False) };
    }
}

impl Drop for Input {
    fn drop(&mut self) {
        // SAFETY: the display was opened by `Input::open` and is closed once.
        unsafe { (self.xlib.XCloseDisplay)(self.display) };
    }
}
