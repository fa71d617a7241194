//! Fix plans (pip, uv, conda, driver, toolkit recipes) and the step runner that carries them out.
//!
//! Empty for now: diagnosis (`probes::diagnose`) produces findings to fix, but no fix plan is
//! written yet, and the CLI offers no fix command until there is one.
