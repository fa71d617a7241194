//! `--screenshot PATH --page NAME`: wait until the probes and page jobs are done, ask the viewport
//! for a screenshot, save it as PNG on a worker thread, and close the window.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::Page;

/// Frames with nothing running before the picture is taken, so the last results are drawn.
const SETTLE_FRAMES: u32 = 5;
/// The picture is taken after this long even if jobs still run (it then shows their spinners).
const GIVE_UP: Duration = Duration::from_secs(120);

/// What `--screenshot` asked for, and where its outcome is written.
#[derive(Debug, Clone)]
pub struct Request {
    /// The PNG to write.
    pub path: PathBuf,
    /// The page to show.
    pub page: Page,
    /// The path written, or why not; `None` until done.
    pub outcome: Arc<Mutex<Option<Result<PathBuf, String>>>>,
}

impl Request {
    /// A request for `page` into `path`.
    pub fn new(path: PathBuf, page: Page) -> Self {
        Self { path, page, outcome: Arc::default() }
    }
}

#[derive(Debug)]
enum Stage {
    Waiting { idle_frames: u32 },
    Saving(Receiver<Result<PathBuf, String>>),
    Done,
}

/// Drives one screenshot through its stages, one frame at a time.
#[derive(Debug)]
pub struct Shooter {
    request: Request,
    stage: Stage,
    started: Instant,
}

impl Shooter {
    /// Starts waiting.
    pub fn new(request: Request) -> Self {
        Self { request, stage: Stage::Waiting { idle_frames: 0 }, started: Instant::now() }
    }

    /// One frame: `busy` says whether anything is still running.
    pub fn step(&mut self, ctx: &egui::Context, busy: bool) {
        match &mut self.stage {
            Stage::Waiting { idle_frames } => {
                *idle_frames = if busy { 0 } else { *idle_frames + 1 };
                if *idle_frames >= SETTLE_FRAMES || self.started.elapsed() > GIVE_UP {
                    let (tx, rx) = mpsc::sync_channel(1);
                    let (path, ctx2) = (self.request.path.clone(), ctx.clone());
                    // The integration hands over the pixels; encoding and writing run on a thread.
                    ctx.request_screenshot(move |image| {
                        let spawned = std::thread::Builder::new().name("gpu-doctor-screenshot".into()).spawn({
                            let tx = tx.clone();
                            let ctx = ctx2.clone();
                            move || {
                                let _ = tx.send(write_png(&path, &image).map(|()| path));
                                ctx.request_repaint();
                            }
                        });
                        if let Err(e) = spawned {
                            let _ = tx.send(Err(format!("could not start the screenshot thread: {e}")));
                            ctx2.request_repaint();
                        }
                    });
                    self.stage = Stage::Saving(rx);
                }
                ctx.request_repaint_after(Duration::from_millis(30));
            }
            Stage::Saving(rx) => {
                if let Ok(outcome) = rx.try_recv() {
                    self.finish(ctx, outcome);
                    self.stage = Stage::Done;
                } else {
                    ctx.request_repaint_after(Duration::from_millis(30));
                }
            }
            Stage::Done => {}
        }
    }

    fn finish(&self, ctx: &egui::Context, outcome: Result<PathBuf, String>) {
        if let Ok(mut slot) = self.request.outcome.lock() {
            *slot = Some(outcome);
        }
        ctx.send_viewport_cmd(egui::ViewportCommand::Close);
    }
}

/// Encodes an egui image as an RGBA PNG.
pub fn write_png(path: &Path, image: &egui::ColorImage) -> Result<(), String> {
    let [w, h] = image.size;
    let bytes: Vec<u8> = image.pixels.iter().flat_map(|c| c.to_srgba_unmultiplied()).collect();
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, u32::try_from(w).unwrap_or(0), u32::try_from(h).unwrap_or(0));
        enc.set_color(png::ColorType::Rgba);
        enc.set_depth(png::BitDepth::Eight);
        let mut writer = enc.write_header().map_err(|e| format!("could not encode the PNG: {e}"))?;
        writer.write_image_data(&bytes).map_err(|e| format!("could not encode the PNG: {e}"))?;
    }
    super::storage::write_atomic(path, &out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_png_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shot.png");
        let mut image = egui::ColorImage::filled([4, 3], egui::Color32::from_rgb(10, 20, 30));
        image.pixels[5] = egui::Color32::WHITE;
        write_png(&path, &image).unwrap();
        let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&path).unwrap()));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!((info.width, info.height), (4, 3));
        assert_eq!(&buf[..4], &[10, 20, 30, 255]);
        assert_eq!(&buf[20..24], &[255, 255, 255, 255]);
    }
}
