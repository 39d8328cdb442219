//! Exports the binary's own `exit` and `quick_exit` (src/engine/exit_trap.rs)
//! to the libraries it loads, so that the engine's calls bind to them rather
//! than to the C library's.

fn main() {
    for symbol in ["exit", "quick_exit"] {
        println!("cargo:rustc-link-arg-bins=-Wl,--export-dynamic-symbol={symbol}");
    }
}
