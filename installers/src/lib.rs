//! Fix plans (pip, uv, conda, driver, toolkit recipes) and the step runner that carries them out.
//!
//! Empty for now: it is filled once diagnosis produces findings to fix. The CLI offers no fix
//! command until it does.
