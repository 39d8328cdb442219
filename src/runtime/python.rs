//! `python3` as a helper (the look-up of `megenginelite`, pip for `runtime install`,
//! a Python's MegEngine to install from),
//! run so that nothing from the current folder takes part: Python puts the current
//! folder first on `sys.path`, so a `./megenginelite/` or `./pip/` there would be
//! what runs.

use std::env;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::trust::{trusted_folders, writable_by_all};

/// `python3 -I`: isolated (neither the current folder nor the script's on
/// `sys.path`, no `PYTHON*` variables, no user site-packages), started in the root
/// folder, from the first folder of `PATH` that can be trusted to hold it (see
/// `trust::trusted_folders`), with a `PATH` of those folders only (what a wrapper script
/// or pip starts in turn is found there too), and without `PYTHON*` variables
/// (a wrapper script that drops `-I` still gets none). `None`: no such `python3`.
pub fn python3() -> Option<Command> {
    trusted_python3().map(|program| isolated(&program))
}

/// The `python3` that `python3()` runs.
pub fn trusted_python3() -> Option<PathBuf> {
    trusted_folders(&env::var_os("PATH").unwrap_or_default())
        .iter()
        .map(|folder| folder.join("python3"))
        .find(|candidate| is_trusted_program(candidate))
}

/// The active virtualenv's `python` (`VIRTUAL_ENV`), where its `bin/` is a
/// folder it can be trusted to come from, as `PATH`'s folders are.
pub fn virtualenv_python() -> Option<PathBuf> {
    let bin = PathBuf::from(env::var_os("VIRTUAL_ENV")?).join("bin");
    trusted_folders(bin.as_os_str())
        .first()
        .map(|folder| folder.join("python"))
        .filter(|candidate| is_trusted_program(candidate))
}

/// `program` run as `python3()` runs its `python3`: isolated, in the root
/// folder, with a `PATH` of trusted folders and no `PYTHON*` variables.
pub fn isolated(program: &Path) -> Command {
    let folders = trusted_folders(&env::var_os("PATH").unwrap_or_default());
    let mut command = Command::new(program);
    command
        .arg("-I")
        .current_dir("/")
        .env("PATH", env::join_paths(&folders).unwrap_or_default());
    for (name, _) in env::vars_os() {
        if name.to_string_lossy().starts_with("PYTHON") {
            command.env_remove(name);
        }
    }
    command
}

fn is_trusted_program(path: &Path) -> bool {
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0 && !writable_by_all(&m))
}
