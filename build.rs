//! Exports the binary's own `exit`, `quick_exit` and `pthread_create`
//! (src/engine/exit_trap.rs) to the libraries it loads, so that the engine's
//! calls bind to them rather than to the C library's.

fn main() {
    // Without it, cargo runs this script again, and rebuilds the binary, whenever any file of
    // the package changes (a page of the guide, a bench script).
    println!("cargo:rerun-if-changed=build.rs");
    for symbol in ["exit", "quick_exit", "pthread_create"] {
        println!("cargo:rustc-link-arg-bins=-Wl,--export-dynamic-symbol={symbol}");
    }
}
