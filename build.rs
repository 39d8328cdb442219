//! Exports the binary's own `exit`, `quick_exit` and `pthread_create`
//! (src/engine/exit_trap.rs) to the libraries it loads, so that the engine's
//! calls bind to them rather than to the C library's.

use std::{env, fs, path::PathBuf};

const EXPORTED: [&str; 3] = ["exit", "quick_exit", "pthread_create"];

fn main() {
    // Without it, cargo runs this script again, and rebuilds the binary, whenever any file of
    // the package changes (a page of the guide, a bench script).
    println!("cargo:rerun-if-changed=build.rs");
    // These three and nothing else: every symbol exported, with a version script that keeps
    // all others local. Both GNU ld and zig's linker (the manylinux_2_17 wheel's) take this
    // form; zig's refuses `--export-dynamic-symbol`.
    let script = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("exported.map");
    let globals: String = EXPORTED.iter().map(|symbol| format!("{symbol}; ")).collect();
    fs::write(&script, format!("{{ global: {globals}local: *; }};\n")).expect("OUT_DIR is writable");
    println!("cargo:rustc-link-arg-bins=-Wl,--export-dynamic");
    // The unit tests' binary defines none of the three (the trap is left out of tests).
    println!("cargo:rustc-link-arg-bins=-Wl,--undefined-version");
    println!("cargo:rustc-link-arg-bins=-Wl,--version-script={}", script.display());
}
