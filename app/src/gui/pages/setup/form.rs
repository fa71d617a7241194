//! The new-environment form: which frameworks, where the environment goes, which tool makes it,
//! and an optional folder of wheels to install from instead of an index.

use std::path::PathBuf;

use egui::Ui;
use gpu_doctor_installers::choose::Framework;
use gpu_doctor_installers::envtool::{self, Tool};

use crate::gui::task::Task;
use crate::gui::theme::{Tone, toned};

/// A new environment, as the form asks for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetupRequest {
    /// The frameworks to install, in `Framework::ALL` order.
    pub frameworks: Vec<Framework>,
    /// Where the environment goes (its prefix).
    pub env: PathBuf,
    /// What makes it and installs into it.
    pub tool: Tool,
    /// Install from this folder of wheels and no index (`--find-links DIR`, offline).
    pub find_links: Option<PathBuf>,
}

/// The tool picked in the form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolPick {
    /// uv (fastest), when on PATH.
    Uv,
    /// `python -m venv` and pip.
    Pip,
    /// conda, mamba or micromamba, when on PATH.
    Conda,
}

/// The environment tools found on PATH.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FoundTools {
    /// `uv`.
    pub uv: Option<PathBuf>,
    /// The first of `conda`, `mamba`, `micromamba`.
    pub conda: Option<PathBuf>,
}

/// Looks for the tools in the folders of `path` (a `PATH` value) as the installers do
/// (`envtool::detect_in`). Touches the file system: only on a worker thread.
pub fn find_tools(path: &std::ffi::OsStr) -> FoundTools {
    let find = |name: &str| envtool::detect_in(Some(name), None, Some(path));
    let uv = match find("uv") {
        Ok(Tool::Uv { uv }) => Some(uv),
        _ => None,
    };
    let conda = envtool::CONDAS.into_iter().find_map(|name| match find(name) {
        Ok(Tool::Conda { conda }) => Some(conda),
        _ => None,
    });
    FoundTools { uv, conda }
}

/// The form's state.
#[derive(Debug)]
pub struct Form {
    /// Ticked frameworks, in `Framework::ALL` order.
    pub frameworks: [bool; 4],
    /// Where the environment goes.
    pub env: String,
    /// The tool; follows what was found on PATH until the user picks one.
    pub tool: ToolPick,
    /// An optional folder of wheels.
    pub find_links: String,
    /// The tools on PATH, looked for once off the UI thread.
    pub tools: Task<FoundTools>,
    tool_picked: bool,
    env_dialog: Task<Option<PathBuf>>,
    links_dialog: Task<Option<PathBuf>>,
    dialogs: bool,
}

impl Default for Form {
    fn default() -> Self {
        let home = std::env::var_os("HOME").or_else(|| std::env::var_os("USERPROFILE")).map(PathBuf::from);
        let env = home.unwrap_or_else(std::env::temp_dir).join("gpu-env");
        Self {
            frameworks: [true, false, false, false],
            env: env.display().to_string(),
            tool: ToolPick::Pip,
            find_links: String::new(),
            tools: Task::default(),
            tool_picked: false,
            env_dialog: Task::default(),
            links_dialog: Task::default(),
            dialogs: crate::gui::native_dialogs(),
        }
    }
}

impl Form {
    /// Picks the tool, as the radio buttons do: it no longer follows what was found on PATH.
    #[cfg(test)]
    pub fn pick_tool(&mut self, tool: ToolPick) {
        self.tool = tool;
        self.tool_picked = true;
    }

    /// Looks for the tools on PATH (once).
    pub fn start(&mut self, ctx: &egui::Context) {
        let path = std::env::var_os("PATH").unwrap_or_default();
        self.tools.spawn("find-tools", ctx, move || Ok(find_tools(&path)));
    }

    /// Whether a dialog or the tool search is under way.
    pub fn busy(&self) -> bool {
        self.tools.is_running() || self.env_dialog.is_running() || self.links_dialog.is_running()
    }

    /// Takes in the tool search and the folder dialogs.
    pub fn logic(&mut self) {
        if self.tools.poll() && !self.tool_picked {
            // uv when it is on PATH (fastest), else venv and pip.
            self.tool = if self.found().uv.is_some() { ToolPick::Uv } else { ToolPick::Pip };
        }
        for (dialog, field) in [(&mut self.env_dialog, &mut self.env), (&mut self.links_dialog, &mut self.find_links)] {
            if dialog.poll()
                && let Some(Some(dir)) = dialog.value().cloned()
            {
                *field = dir.display().to_string();
                dialog.clear();
            }
        }
    }

    fn found(&self) -> FoundTools {
        self.tools.value().cloned().unwrap_or_default()
    }

    /// The request the form describes, or what is missing.
    pub fn request(&self) -> Result<SetupRequest, String> {
        let frameworks: Vec<Framework> =
            Framework::ALL.into_iter().zip(self.frameworks).filter_map(|(f, on)| on.then_some(f)).collect();
        if frameworks.is_empty() {
            return Err("Pick at least one framework.".into());
        }
        let env = self.env.trim();
        if env.is_empty() {
            return Err("Say where the environment goes.".into());
        }
        let found = self.found();
        let tool = match self.tool {
            ToolPick::Pip => Tool::Pip,
            ToolPick::Uv => Tool::Uv { uv: found.uv.ok_or("uv is not on PATH: pick pip or conda.")? },
            ToolPick::Conda => Tool::Conda { conda: found.conda.ok_or("No conda, mamba or micromamba on PATH.")? },
        };
        let links = self.find_links.trim();
        let find_links = (!links.is_empty()).then(|| PathBuf::from(links));
        Ok(SetupRequest { frameworks, env: PathBuf::from(env), tool, find_links })
    }

    /// Draws the form.
    pub fn form_ui(&mut self, ui: &mut Ui) {
        egui::Grid::new("setup-form").num_columns(2).spacing([12.0, 6.0]).show(ui, |ui| {
            ui.label("Frameworks");
            ui.horizontal(|ui| {
                for (f, on) in Framework::ALL.into_iter().zip(self.frameworks.iter_mut()) {
                    ui.checkbox(on, f.name());
                }
            });
            ui.end_row();
            ui.label("Environment");
            self.folder_ui(ui, true);
            ui.end_row();
            ui.label("Tool");
            self.tool_ui(ui);
            ui.end_row();
            ui.label("Wheel folder");
            self.folder_ui(ui, false);
            ui.end_row();
        });
    }

    /// The environment's folder (`env`) or the wheel folder, typed or picked in a dialog.
    fn folder_ui(&mut self, ui: &mut Ui, env: bool) {
        let dialogs = self.dialogs;
        let (field, dialog, hint, title) = if env {
            (&mut self.env, &mut self.env_dialog, "/path/to/new/env", "Where the new environment goes")
        } else {
            (&mut self.find_links, &mut self.links_dialog, "optional: install offline from here", "A folder of wheels")
        };
        ui.horizontal(|ui| {
            ui.add(egui::TextEdit::singleline(field).hint_text(hint).desired_width(360.0));
            let label = if env { "Choose folder…" } else { "Choose wheel folder…" };
            if ui
                .add_enabled(dialogs && !dialog.is_running(), egui::Button::new(label))
                .on_disabled_hover_text("No folder dialog here (no desktop portal): type the folder")
                .clicked()
            {
                dialog
                    .spawn("setup-dialog", ui.ctx(), move || Ok(rfd::FileDialog::new().set_title(title).pick_folder()));
            }
        });
    }

    fn tool_ui(&mut self, ui: &mut Ui) {
        let found = self.found();
        ui.horizontal(|ui| {
            let before = self.tool;
            ui.add_enabled_ui(found.uv.is_some(), |ui| ui.radio_value(&mut self.tool, ToolPick::Uv, "uv"))
                .response
                .on_disabled_hover_text("uv is not on PATH");
            ui.radio_value(&mut self.tool, ToolPick::Pip, "venv + pip");
            ui.add_enabled_ui(found.conda.is_some(), |ui| ui.radio_value(&mut self.tool, ToolPick::Conda, "conda"))
                .response
                .on_disabled_hover_text("No conda, mamba or micromamba on PATH");
            self.tool_picked |= self.tool != before;
            if self.tools.is_running() {
                ui.spinner();
                ui.label(toned(ui, Tone::Muted, "looking for uv and conda…"));
            }
        });
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[cfg(unix)]
    #[test]
    fn tools_are_found_on_path_only_when_executable() {
        use std::os::unix::fs::PermissionsExt;
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        std::fs::write(a.path().join("uv"), "").unwrap(); // not executable: skipped
        for name in ["uv", "mamba"] {
            let p = b.path().join(name);
            std::fs::write(&p, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let path = std::env::join_paths([a.path(), b.path()]).unwrap();
        let found = find_tools(&path);
        assert_eq!(found.uv, Some(b.path().join("uv")));
        assert_eq!(found.conda, Some(b.path().join("mamba")));
        assert_eq!(find_tools(&std::env::join_paths([a.path()]).unwrap()), FoundTools::default());
    }

    #[test]
    fn the_request_needs_a_framework_a_folder_and_a_found_tool() {
        let mut form = Form { env: "/tmp/e".into(), ..Form::default() };
        assert_eq!(form.request().unwrap().tool, Tool::Pip);
        form.tool = ToolPick::Uv;
        assert!(form.request().unwrap_err().contains("uv is not on PATH"));
        form.tool = ToolPick::Pip;
        form.frameworks = [false; 4];
        assert!(form.request().is_err());
        form.frameworks = [false, true, false, true];
        form.find_links = " /w ".into();
        let req = form.request().unwrap();
        assert_eq!(req.frameworks, [Framework::Jax, Framework::Cupy]);
        assert_eq!(req.find_links, Some(PathBuf::from("/w")));
    }
}
