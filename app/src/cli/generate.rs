//! The shell completions and man pages, generated from the clap definitions so that they always
//! match the command line: the hidden `completions SHELL` and `man [--dir DIR]`, for packaging.

use std::path::Path;

use anyhow::{Context, Result};
use clap::CommandFactory;
use clap_complete::Shell;

use super::Cli;
use crate::exit;

/// The name the completions complete and the man pages are titled with.
const BIN: &str = "gpu-doctor";

/// The completion script for `shell`.
pub fn completions(shell: Shell) -> Vec<u8> {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), BIN, &mut out);
    out
}

/// Every man page, as (file name, roff): `gpu-doctor.1`, whose COMMANDS section points to the
/// others, then `gpu-doctor-COMMAND.1` for each command that `--help` lists.
pub fn man_pages() -> Result<Vec<(String, Vec<u8>)>> {
    let mut cmd = Cli::command().name(BIN).disable_help_subcommand(true);
    cmd.build();
    let subs = cmd.get_subcommands().filter(|s| !s.is_hide_set()).cloned().collect::<Vec<_>>();
    std::iter::once(cmd).chain(subs).map(page).collect()
}

fn page(cmd: clap::Command) -> Result<(String, Vec<u8>)> {
    let man = clap_mangen::Man::new(cmd);
    let mut roff = Vec::new();
    man.render(&mut roff).context("could not write the man page")?;
    Ok((man.get_filename(), roff))
}

/// `completions SHELL`: the script on standard output.
pub fn print_completions(shell: Shell) -> Result<u8> {
    crate::files::to_stdout(&completions(shell))?;
    Ok(exit::OK)
}

/// `man`: `gpu-doctor.1` on standard output, or with `dir` every page written into it.
pub fn man(dir: Option<&Path>, quiet: bool) -> Result<u8> {
    let pages = man_pages()?;
    let Some(dir) = dir else {
        let main = pages.first().map(|(_, roff)| roff.as_slice()).unwrap_or_default();
        crate::files::to_stdout(main)?;
        return Ok(exit::OK);
    };
    std::fs::create_dir_all(dir).with_context(|| format!("could not create {}", dir.display()))?;
    for (name, roff) in &pages {
        crate::files::emit(Some(&dir.join(name)), roff, quiet)?;
    }
    Ok(exit::OK)
}
