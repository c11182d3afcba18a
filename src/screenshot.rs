//! Pictures of the view: the 3D view rendered offscreen (what `rigscope render` writes),
//! screenshots from the window (F12) and the whole UI rendered offscreen (`render --ui`).

use crate::draw::ViewRenderer;
use crate::render::offscreen::read_buffer;
use crate::render::{Gpu, GpuError, PixelRect};
use crate::ui::{self, FrameInfo, UiState};
use crate::viewer::Viewer;
use image::RgbaImage;
use std::path::{Path, PathBuf};

/// What screenshot files are named after: the open file's stem, or `demo`.
pub fn file_stem(viewer: &Viewer) -> String {
    viewer
        .document()
        .path
        .as_ref()
        .and_then(|p| p.file_stem())
        .map_or_else(|| "demo".to_owned(), |s| s.to_string_lossy().into_owned())
}

/// `folder/stem-NNN.png` with the first number not taken yet.
pub fn numbered_path(folder: &Path, stem: &str) -> PathBuf {
    (1u32..)
        .map(|n| folder.join(format!("{stem}-{n:03}.png")))
        .find(|p| !p.exists())
        .expect("a free file name")
}

/// Why a screenshot or a rendered PNG was not written.
#[derive(Debug, thiserror::Error)]
pub enum ScreenshotError {
    #[error("cannot write {}: there is no folder {}", path.display(), crate::save::folder_of(path).display())]
    NoFolder { path: PathBuf },
    #[error("cannot write {}: {source}", path.display())]
    Write { path: PathBuf, source: std::io::Error },
    #[error("cannot write {}: {source}", path.display())]
    Encode { path: PathBuf, source: image::ImageError },
    #[error("cannot create {}: {source}", path.display())]
    CreateFolder { path: PathBuf, source: std::io::Error },
    #[error("the window's pixel format {0:?} cannot be saved")]
    PixelFormat(wgpu::TextureFormat),
    #[error(transparent)]
    Gpu(#[from] GpuError),
}

/// Writes `image` to `path` as a PNG whole or not at all: encoded into a temporary file beside
/// `path`, which replaces it only once written, so that a failure (a full disk, an interrupted
/// run) leaves any earlier file at `path` as it was and no partial one.
pub fn write_png(image: &RgbaImage, path: &Path) -> Result<(), ScreenshotError> {
    let path_buf = || path.to_owned();
    let failed = |source| ScreenshotError::Write {
        path: path_buf(),
        source,
    };
    let folder = crate::save::folder_of(path);
    let mut temp = crate::save::temp_file_in(&folder, ".rigscope-png-").map_err(|e| match folder.is_dir() {
        true => failed(e),
        false => ScreenshotError::NoFolder { path: path_buf() },
    })?;
    let mut writer = std::io::BufWriter::new(temp.as_file_mut());
    (image.write_to(&mut writer, image::ImageFormat::Png)).map_err(|source| ScreenshotError::Encode {
        path: path_buf(),
        source,
    })?;
    std::io::Write::flush(&mut writer).map_err(failed)?;
    drop(writer);
    temp.persist(path).map_err(|e| failed(e.error))?;
    Ok(())
}

/// Writes `image` as the next numbered PNG for `stem` in `folder` (created when missing).
pub fn save_png(image: &RgbaImage, folder: &Path, stem: &str) -> Result<PathBuf, ScreenshotError> {
    std::fs::create_dir_all(folder).map_err(|source| ScreenshotError::CreateFolder {
        path: folder.to_owned(),
        source,
    })?;
    let path = numbered_path(folder, stem);
    write_png(image, &path)?;
    Ok(path)
}

/// What F12 does without the panels: renders the view at the size it has on screen
/// (`viewport`, in pixels), saves it in the screenshot folder and shows the path in a toast.
/// A failure is shown as the viewer's error.
pub fn save_viewport(gpu: &Gpu, viewer: &mut Viewer, state: &mut UiState, viewport: PixelRect) -> Option<PathBuf> {
    let result = render_view(gpu, viewer, viewport.width, viewport.height)
        .map_err(ScreenshotError::from)
        .and_then(|image| save_png(&image, &state.screenshot.folder(), &file_stem(viewer)));
    finish(viewer, state, result)
}

/// Saves a captured window image (F12 with the panels), like [`save_viewport`].
pub fn save_window(
    viewer: &mut Viewer,
    state: &mut UiState,
    image: Result<RgbaImage, ScreenshotError>,
) -> Option<PathBuf> {
    let result = image.and_then(|image| save_png(&image, &state.screenshot.folder(), &file_stem(viewer)));
    finish(viewer, state, result)
}

fn finish(viewer: &mut Viewer, state: &mut UiState, result: Result<PathBuf, ScreenshotError>) -> Option<PathBuf> {
    match result {
        Ok(path) => {
            state.toast(format!("Screenshot saved to {}", path.display()));
            Some(path)
        }
        Err(e) => {
            viewer.diagnostics.error = Some(format!("the screenshot was not saved: {e}"));
            None
        }
    }
}

/// A copy of a texture on its way to the CPU: encoded with the frame, read after submitting.
pub struct TextureCapture {
    buffer: wgpu::Buffer,
    width: u32,
    height: u32,
    padded_row: u32,
    bgra: bool,
}

impl TextureCapture {
    /// Encodes a copy of `texture` (which needs `COPY_SRC` usage); `None` when its format is
    /// not 8-bit RGBA or BGRA.
    pub fn encode(device: &wgpu::Device, encoder: &mut wgpu::CommandEncoder, texture: &wgpu::Texture) -> Option<Self> {
        use wgpu::TextureFormat as F;
        let bgra = match texture.format() {
            F::Rgba8Unorm | F::Rgba8UnormSrgb => false,
            F::Bgra8Unorm | F::Bgra8UnormSrgb => true,
            _ => return None,
        };
        let (width, height) = (texture.width(), texture.height());
        let padded_row = (width * 4).next_multiple_of(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT);
        let buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("screenshot readback"),
            size: u64::from(padded_row) * u64::from(height),
            usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
            mapped_at_creation: false,
        });
        encoder.copy_texture_to_buffer(
            texture.as_image_copy(),
            wgpu::TexelCopyBufferInfo {
                buffer: &buffer,
                layout: wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(padded_row),
                    rows_per_image: Some(height),
                },
            },
            wgpu::Extent3d {
                width,
                height,
                depth_or_array_layers: 1,
            },
        );
        Some(TextureCapture {
            buffer,
            width,
            height,
            padded_row,
            bgra,
        })
    }

    /// Waits for the copy (submit the encoder first) and returns the pixels as RGBA.
    pub fn read(self, gpu: &Gpu) -> Result<RgbaImage, GpuError> {
        let bytes = read_buffer(gpu, &self.buffer)?;
        let row = (self.width * 4) as usize;
        let mut pixels = Vec::with_capacity(row * self.height as usize);
        for padded in bytes.chunks_exact(self.padded_row as usize) {
            pixels.extend_from_slice(&padded[..row]);
        }
        if self.bgra {
            for pixel in pixels.chunks_exact_mut(4) {
                pixel.swap(0, 2);
            }
        }
        // A window's alpha is whatever the compositor ignores; a PNG should be opaque.
        for pixel in pixels.chunks_exact_mut(4) {
            pixel[3] = 255;
        }
        RgbaImage::from_raw(self.width, self.height, pixels).ok_or(GpuError::WrongSize {
            what: "screenshot readback",
        })
    }
}

/// Why the whole window could not be drawn offscreen.
#[derive(Debug, thiserror::Error)]
pub enum UiRenderError {
    #[error(transparent)]
    Gpu(#[from] GpuError),
    #[error("the UI did not run")]
    NotRun,
}

/// Frames of UI run before the one drawn, so that panels settle at their sizes.
const UI_SETTLE_FRAMES: usize = 3;

/// The whole window as the viewer would show it at `width`×`height` pixels (panels, menus,
/// the 3D view), drawn offscreen with egui's wgpu renderer with `samples` per pixel in the 3D
/// view: what `rigscope render --ui` writes.
pub fn render_ui(
    gpu: &Gpu,
    viewer: &mut Viewer,
    state: &mut UiState,
    width: u32,
    height: u32,
    pixels_per_point: f32,
    samples: u32,
) -> Result<RgbaImage, UiRenderError> {
    let (target, mut view_renderer) = ViewRenderer::offscreen_target(gpu, width, height, samples)?;
    let mut renderer = egui_wgpu::Renderer::new(
        &gpu.device,
        target.overlay_format(),
        egui_wgpu::RendererOptions::default(),
    );
    let ctx = egui::Context::default();
    let info = FrameInfo {
        adapter: gpu.describe(),
        fps: 0.0,
        samples,
        detail: None,
    };
    let size_points = egui::vec2(width as f32, height as f32) / pixels_per_point;
    let mut last = None;
    for _ in 0..=UI_SETTLE_FRAMES {
        let mut raw = egui::RawInput {
            screen_rect: Some(egui::Rect::from_min_size(egui::Pos2::ZERO, size_points)),
            ..egui::RawInput::default()
        };
        raw.viewports
            .entry(egui::ViewportId::ROOT)
            .or_default()
            .native_pixels_per_point = Some(pixels_per_point);
        let mut output = None;
        let full_output = ctx.run_ui(raw, |ui| {
            output = Some(ui::show(ui, viewer, state, &info));
        });
        // Every frame's texture changes are applied (the font atlas comes with the first).
        for (id, deltas) in &full_output.textures_delta.set {
            for delta in deltas {
                renderer.update_texture(&gpu.device, &gpu.queue, *id, delta);
            }
        }
        for id in &full_output.textures_delta.free {
            renderer.free_texture(id);
        }
        last = Some((full_output, output.ok_or(UiRenderError::NotRun)?));
    }
    let (full_output, output) = last.ok_or(UiRenderError::NotRun)?;
    let ppp = full_output.pixels_per_point;
    let viewport = ui::viewport_pixels(output.viewport, ppp);
    let paint_jobs = ctx.tessellate(full_output.shapes, ppp);
    let screen = egui_wgpu::ScreenDescriptor {
        size_in_pixels: [width, height],
        pixels_per_point: ppp,
    };
    let mut overlay = |encoder: &mut wgpu::CommandEncoder, view: &wgpu::TextureView| {
        crate::ui::paint::encode_egui(
            &mut renderer,
            &gpu.device,
            &gpu.queue,
            encoder,
            view,
            &paint_jobs,
            &screen,
        )
    };
    Ok(view_renderer.render_image(gpu, &target, viewer, Some(viewport), Some(&mut overlay))?)
}

/// Windows `rigscope render --ui` opens over the panels.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct UiWindows {
    /// The Audit window, on the rig's worst joint.
    pub audit: bool,
    /// The Curves window, on the selected joint.
    pub curves: bool,
    /// The Repair weights window with these repairs (previewed on the viewer by the caller).
    pub repair: Option<crate::viewer::RepairOptions>,
}

/// The whole window as [`render_ui`] draws it, with `windows` open over the panels.
pub fn render_window(
    gpu: &Gpu,
    viewer: &mut Viewer,
    windows: UiWindows,
    (width, height): (u32, u32),
    samples: u32,
) -> Result<RgbaImage, UiRenderError> {
    let mut state = UiState::default();
    if let Some(options) = windows.repair {
        state.repair.open = true;
        state.repair.options = options;
    }
    if windows.audit {
        state.audit.open_at_worst_joint(viewer);
    }
    state.curves.open = windows.curves;
    render_ui(gpu, viewer, &mut state, width, height, 1.0, samples)
}

/// The 3D view as the viewer shows it (same camera, pose and view options), without the UI,
/// rendered offscreen at `width`×`height` pixels.
/// With a comparison open, both sides as its layout shows them (see [`crate::draw::compare`]).
pub fn render_view(gpu: &Gpu, viewer: &mut Viewer, width: u32, height: u32) -> Result<image::RgbaImage, GpuError> {
    render_view_with(gpu, viewer, width, height, crate::render::scene::OFFSCREEN_SAMPLES)
}

/// [`render_view`] drawn with `samples` per pixel (1 for none, else a count from
/// [`Msaa::samples`](crate::render::Msaa::samples)).
pub fn render_view_with(
    gpu: &Gpu,
    viewer: &mut Viewer,
    width: u32,
    height: u32,
    samples: u32,
) -> Result<image::RgbaImage, GpuError> {
    if viewer.comparison().is_some() {
        return crate::draw::compare::render_comparison(gpu, viewer, width, height, samples);
    }
    render_one_side(gpu, viewer, width, height, samples)
}

/// [`render_view_with`] of the viewer's active document alone.
fn render_one_side(
    gpu: &Gpu,
    viewer: &mut Viewer,
    width: u32,
    height: u32,
    samples: u32,
) -> Result<image::RgbaImage, GpuError> {
    let start = std::time::Instant::now();
    let lap = |what: &str| log::debug!("{what}: {:.1} ms", start.elapsed().as_secs_f64() * 1e3);
    let (target, mut renderer) = ViewRenderer::offscreen_target(gpu, width, height, samples)?;
    lap("renderer created");
    let image = renderer.render_image(gpu, &target, viewer, None, None);
    lap("rig uploaded, frame written, drawn and read back");
    image
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pngs_are_written_whole_or_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let leftovers = || {
            std::fs::read_dir(dir.path())
                .unwrap()
                .filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().starts_with(".rigscope-png-"))
                .count()
        };
        let image = RgbaImage::from_fn(7, 5, |x, y| image::Rgba([x as u8 * 30, y as u8 * 50, 9, 255]));
        let path = dir.path().join("out.png");
        std::fs::write(&path, b"an earlier file").unwrap();
        write_png(&image, &path).unwrap();
        assert_eq!(
            image::open(&path).unwrap().to_rgba8(),
            image,
            "replaced by the whole image"
        );
        assert_eq!(leftovers(), 0);

        // A path that cannot be replaced (a folder): an error, the folder as it was, no
        // temporary file left behind.
        let folder = dir.path().join("a folder");
        std::fs::create_dir(&folder).unwrap();
        let error = write_png(&image, &folder).unwrap_err();
        assert!(
            matches!(&error, ScreenshotError::Write { path, .. } if *path == folder),
            "{error}"
        );
        assert!(
            error
                .to_string()
                .starts_with(&format!("cannot write {}", folder.display())),
            "{error}"
        );
        assert!(folder.is_dir() && std::fs::read_dir(&folder).unwrap().next().is_none());
        assert_eq!(leftovers(), 0);

        let missing = dir.path().join("missing").join("out.png");
        let error = write_png(&image, &missing).unwrap_err();
        assert!(matches!(error, ScreenshotError::NoFolder { .. }), "{error}");
        assert!(error.to_string().contains("there is no folder"), "{error}");
        assert!(!missing.exists());
    }

    #[test]
    fn screenshot_names_count_up_without_overwriting() {
        let folder = tempfile::tempdir().unwrap();
        let dir = folder.path().join("shots");
        let image = RgbaImage::new(2, 2);
        let first = save_png(&image, &dir, "Fox").unwrap();
        let second = save_png(&image, &dir, "Fox").unwrap();
        assert_eq!(first, dir.join("Fox-001.png"));
        assert_eq!(second, dir.join("Fox-002.png"));
    }
}
