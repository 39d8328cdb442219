//! Pieces of messages shared by every layer: names and paths as text output
//! shows them.

use std::borrow::Cow;
use std::fmt::Write;

/// Names for a message: `'a', 'b', 'c'`.
pub fn quoted_list<S: AsRef<str>>(names: impl IntoIterator<Item = S>) -> String {
    let quoted: Vec<String> = names.into_iter().map(|name| format!("'{}'", name.as_ref())).collect();
    quoted.join(", ")
}

/// Whether text output shows `c` escaped: control characters (C0, DEL, C1),
/// which move the cursor, colour, ring or end the line, and the invisible
/// characters that reorder or hide what a terminal shows (bidirectional
/// marks and overrides, zero-width characters, line and paragraph separators).
fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{061c}' | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}')
}

/// `text` as text output shows it: hidden characters (see `is_hidden`)
/// escaped as `\n`, `\t`, `\r`, `\x1b` or `\u{202e}`, so that a name or a
/// path can neither drive the terminal nor forge a line of a report. JSON
/// output keeps text exact.
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_hidden) {
        return Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        push_printable(&mut shown, c);
    }
    Cow::Owned(shown)
}

/// Lines of text output (a report) with their hidden characters but the
/// line breaks escaped (see `printable`).
pub fn printable_lines(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| c != '\n' && is_hidden(c)) {
        return Cow::Borrowed(text);
    }
    let lines: Vec<Cow<str>> = text.split('\n').map(printable).collect();
    Cow::Owned(lines.join("\n"))
}

fn push_printable(shown: &mut String, c: char) {
    match c {
        '\n' => shown.push_str("\\n"),
        '\t' => shown.push_str("\\t"),
        '\r' => shown.push_str("\\r"),
        c if (c as u32) < 0x100 && is_hidden(c) => {
            let _ = write!(shown, "\\x{:02x}", c as u32);
        }
        c if is_hidden(c) => {
            let _ = write!(shown, "\\u{{{:x}}}", c as u32);
        }
        c => shown.push(c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shows_hidden_characters_escaped() {
        assert_eq!(printable("输出 a/b\\c 'q'"), "输出 a/b\\c 'q'");
        assert_eq!(printable("line1\nline2"), "line1\\nline2");
        assert_eq!(printable("x\x1b[31mred\x07\t\r\u{85}"), "x\\x1b[31mred\\x07\\t\\r\\x85");
        assert_eq!(printable("abc\u{202e}def\u{200b}"), "abc\\u{202e}def\\u{200b}");
        assert_eq!(printable_lines("a\x1b[0m\nb\n"), "a\\x1b[0m\nb\n");
    }
}
