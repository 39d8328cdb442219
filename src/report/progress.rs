//! Progress bars on stderr. indicatif hides them when stderr is not a terminal.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

fn bar(total: u64, template: &str, message: &'static str, quiet: bool) -> ProgressBar {
    let target = if quiet {
        ProgressDrawTarget::hidden()
    } else {
        ProgressDrawTarget::stderr()
    };
    let bar = ProgressBar::with_draw_target(Some(total), target).with_message(message);
    bar.set_style(ProgressStyle::with_template(template).expect("templates are valid"));
    bar
}

/// A bar counting bytes, for downloads and extraction.
pub fn bytes(total: u64, message: &'static str, quiet: bool) -> ProgressBar {
    bar(total, "{msg} [{bar:30}] {bytes}/{total_bytes} ({eta})", message, quiet)
}

/// A bar counting engine runs.
pub fn runs(total: u64, message: &'static str, quiet: bool) -> ProgressBar {
    bar(total, "{msg} [{bar:30}] {pos}/{len} ({eta})", message, quiet)
}
