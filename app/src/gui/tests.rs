//! GUI flows driven through egui_kittest: the real `App` on a replayed machine, clicked by label.
