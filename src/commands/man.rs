//! `mge man DIR`: manual pages from the command-line definitions, one for
//! `mge` and one per subcommand (`mge-run.1`, `mge-runtime-install.1`, ...).

use std::path::Path;

use anyhow::{bail, Context, Result};
use clap::CommandFactory;

use crate::cli::Cli;
use crate::output_files::write_atomically;
use crate::report::emit;

pub fn man(dir: &Path) -> Result<()> {
    if !dir.is_dir() {
        bail!("{} is not a folder: create it or name another", dir.display());
    }
    let mut command = Cli::command().disable_help_subcommand(true);
    command.build();
    let mut pages = Vec::new();
    render(command, &mut pages)?;
    let mut written = String::new();
    for (file, page) in pages {
        let path = dir.join(file);
        write_atomically(&path, &page).with_context(|| format!("man page {}", path.display()))?;
        written.push_str(&format!("{}\n", path.display()));
    }
    emit(&written)
}

/// `(file name, roff)` of `command` and of each visible subcommand, recursively.
fn render(command: clap::Command, pages: &mut Vec<(String, Vec<u8>)>) -> Result<()> {
    for sub in command.get_subcommands().filter(|sub| !sub.is_hide_set()) {
        render(sub.clone(), pages)?;
    }
    let page = clap_mangen::Man::new(command);
    let mut roff = Vec::new();
    page.render(&mut roff)?;
    pages.push((page.get_filename(), roff));
    Ok(())
}
