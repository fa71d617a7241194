//! One palette for severities and verdicts, in a dark and a light variant that follow egui's theme.

use egui::{Color32, RichText, Ui};
use gpu_doctor_model::Severity;

/// How good something is, for colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// Fine.
    Good,
    /// Worth a look.
    Warn,
    /// Broken.
    Bad,
    /// Neutral information.
    Info,
    /// Not known.
    Muted,
}

impl Tone {
    /// The tone of a finding's severity.
    pub fn of(severity: Severity) -> Self {
        match severity {
            Severity::Error => Tone::Bad,
            Severity::Warning => Tone::Warn,
            Severity::Info => Tone::Info,
        }
    }

    /// The colour for text and strokes, readable on the current theme's background.
    pub fn color(self, ui: &Ui) -> Color32 {
        self.palette(ui.visuals().dark_mode).unwrap_or_else(|| ui.visuals().weak_text_color())
    }

    /// The palette's colour on a dark or a light background; `None` for `Muted`, which is the
    /// theme's weak text colour.
    pub fn palette(self, dark: bool) -> Option<Color32> {
        Some(match (self, dark) {
            (Tone::Good, true) => Color32::from_rgb(0x5f, 0xd0, 0x7a),
            (Tone::Good, false) => Color32::from_rgb(0x1a, 0x7f, 0x37),
            (Tone::Warn, true) => Color32::from_rgb(0xf0, 0xb4, 0x29),
            (Tone::Warn, false) => Color32::from_rgb(0x9a, 0x67, 0x00),
            (Tone::Bad, true) => Color32::from_rgb(0xff, 0x6b, 0x6b),
            (Tone::Bad, false) => Color32::from_rgb(0xc6, 0x28, 0x28),
            (Tone::Info, true) => Color32::from_rgb(0x6c, 0xb6, 0xff),
            (Tone::Info, false) => Color32::from_rgb(0x0b, 0x5c, 0xad),
            (Tone::Muted, _) => return None,
        })
    }

    /// A faint fill behind a banner or badge of this tone.
    pub fn fill(self, ui: &Ui) -> Color32 {
        let c = self.color(ui);
        let alpha = if ui.visuals().dark_mode { 40 } else { 28 };
        Color32::from_rgba_unmultiplied(c.r(), c.g(), c.b(), alpha)
    }
}

/// Text in a tone's colour.
pub fn toned(ui: &Ui, tone: Tone, text: impl Into<String>) -> RichText {
    RichText::new(text.into()).color(tone.color(ui))
}

/// A small rounded badge, e.g. `eGPU` or `error`.
pub fn badge_ui(ui: &mut Ui, tone: Tone, text: &str) -> egui::Response {
    egui::Frame::new()
        .fill(tone.fill(ui))
        .stroke(egui::Stroke::new(1.0, tone.color(ui)))
        .corner_radius(4.0)
        .inner_margin(egui::Margin::symmetric(5, 1))
        .show(ui, |ui| ui.label(toned(ui, tone, text).small().strong()))
        .response
}

/// Adds the bundled monospace font (Hack) as the last fallback of the proportional family: it has
/// the arrows (`→`, `←`) the knowledge base and the benchmark labels use, which the proportional
/// font and the emoji fonts lack. Hack is loaded for monospace text anyway, so this costs nothing.
pub fn install_fonts(ctx: &egui::Context) {
    let mut fonts = egui::FontDefinitions::default();
    let mono = fonts.families.get(&egui::FontFamily::Monospace).and_then(|f| f.first().cloned());
    if let (Some(mono), Some(prop)) = (mono, fonts.families.get_mut(&egui::FontFamily::Proportional))
        && !prop.contains(&mono)
    {
        prop.push(mono);
    }
    ctx.set_fonts(fonts);
}
