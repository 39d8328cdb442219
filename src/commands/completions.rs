use anyhow::Result;
use clap::CommandFactory;
use clap_complete::Shell;

use crate::cli::Cli;

pub fn completions(shell: Shell) -> Result<()> {
    clap_complete::generate(shell, &mut Cli::command(), "mge", &mut std::io::stdout());
    Ok(())
}
