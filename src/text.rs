//! Pieces of messages shared by every layer: names and paths as text output
//! shows them, and words as a shell reads them back (`messages` says them).

use std::borrow::Cow;
use std::ffi::OsStr;
use std::fmt::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Names for a message: `'a', 'b', 'c'`.
pub fn quoted_list<S: AsRef<str>>(names: impl IntoIterator<Item = S>) -> String {
    let quoted: Vec<String> = names.into_iter().map(|name| format!("'{}'", name.as_ref())).collect();
    quoted.join(", ")
}

/// An error, a difference or a tolerance as every report prints it: six
/// significant digits at most, in plain notation from 1e-3 to 1e6, else in
/// Rust's scientific one: `0`, `0.5`, `0.036626`, `2.38419e-7`, `1e-4`.
pub fn number(value: f64) -> String {
    if value == 0.0 {
        return "0".to_string();
    }
    if !value.is_finite() {
        return format!("{value}");
    }
    let rounded: f64 = format!("{value:.5e}").parse().unwrap_or(value);
    match (1e-3..1e6).contains(&rounded.abs()) {
        true => format!("{rounded}"),
        false => format!("{rounded:e}"),
    }
}

/// `1 run`, `3 runs`: a count with its noun, which takes an `s` but for one.
pub fn counted(count: usize, noun: &str) -> String {
    match count {
        1 => format!("1 {noun}"),
        _ => format!("{count} {noun}s"),
    }
}

/// `1 of 1 output`, `2 of 3 outputs`: a part of a count, the noun agreeing
/// with the whole.
pub fn part_of(part: usize, whole: usize, noun: &str) -> String {
    format!("{part} of {}", counted(whole, noun))
}

/// `differ` as its count of subjects takes it: `1 ... differs`, `2 ... differ`.
pub fn differ(subjects: usize) -> &'static str {
    match subjects {
        1 => "differs",
        _ => "differ",
    }
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

/// `path` as text: its UTF-8 as it is, each byte that is not UTF-8 as
/// `\xHH`, as printed commands write such bytes, so that paths that differ
/// only there read differently (`Path::display` shows each as U+FFFD).
pub fn path_text(path: &Path) -> String {
    let mut text = String::new();
    for chunk in path.as_os_str().as_bytes().utf8_chunks() {
        text.push_str(chunk.valid());
        for byte in chunk.invalid() {
            let _ = write!(text, "\\x{byte:02x}");
        }
    }
    text
}

/// `text` within about `bound` bytes: as it is when it fits, else its
/// first and last halves around a mark of how many bytes were left out, so
/// that a name of any length leaves the message around it whole.
pub fn cut(text: &str, bound: usize) -> Cow<'_, str> {
    if text.len() <= bound {
        return Cow::Borrowed(text);
    }
    let half = bound / 2;
    let head_end = (0..=half).rev().find(|at| text.is_char_boundary(*at)).unwrap_or(0);
    let tail_start = (text.len() - half..text.len())
        .find(|at| text.is_char_boundary(*at))
        .unwrap_or(text.len());
    let left_out = tail_start - head_end;
    Cow::Owned(format!(
        "{}[... {left_out} bytes left out ...]{}",
        &text[..head_end],
        &text[tail_start..]
    ))
}

/// `text` as a markdown table cell shows it literally: every character that
/// GitHub-flavoured markdown reads as formatting escaped with a backslash,
/// `|` too, so that a name can neither end its cell nor become a link.
pub fn markdown_cell(text: &str) -> String {
    let mut cell = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if matches!(
            c,
            '\\' | '|' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '!' | '&' | '~' | '#'
        ) {
            cell.push('\\');
        }
        cell.push(c);
    }
    cell
}

/// `text` as the message of a GitHub Actions workflow command (`::error::`):
/// `%`, CR and LF percent-encoded, as the runner decodes them.
pub fn workflow_command_data(text: &str) -> String {
    text.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// `text` as a property of a workflow command (`title=`): its data's
/// encoding, and `:` and `,`, which end a property.
pub fn workflow_command_property(text: &str) -> String {
    workflow_command_data(text).replace(':', "%3A").replace(',', "%2C")
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

/// `word` quoted for a shell (bash, zsh, ksh) to read back byte for byte: as
/// it is when plain, in single quotes when printable, else as `$'...'` with
/// hidden characters (see `is_hidden`) and bytes that are not UTF-8 as `\xHH`.
pub fn shell_word(word: &OsStr) -> String {
    let bytes = word.as_bytes();
    let plain = |byte: &u8| byte.is_ascii_alphanumeric() || b"_-./:=@%+,".contains(byte);
    if !bytes.is_empty() && bytes.iter().all(plain) {
        return String::from_utf8_lossy(bytes).into_owned();
    }
    match std::str::from_utf8(bytes) {
        Ok(text) if !text.chars().any(is_hidden) => format!("'{}'", text.replace('\'', r"'\''")),
        _ => {
            let mut quoted = String::from("$'");
            for chunk in bytes.utf8_chunks() {
                for c in chunk.valid().chars() {
                    match c {
                        '\\' | '\'' => {
                            quoted.push('\\');
                            quoted.push(c);
                        }
                        c if is_hidden(c) => {
                            let mut utf8 = [0; 4];
                            for byte in c.encode_utf8(&mut utf8).bytes() {
                                let _ = write!(quoted, "\\x{byte:02x}");
                            }
                        }
                        c => quoted.push(c),
                    }
                }
                for byte in chunk.invalid() {
                    let _ = write!(quoted, "\\x{byte:02x}");
                }
            }
            quoted.push('\'');
            quoted
        }
    }
}

/// Words as one command line a shell runs as given (see `shell_word`).
pub fn shell_line<W: AsRef<OsStr>>(words: impl IntoIterator<Item = W>) -> String {
    let quoted: Vec<String> = words.into_iter().map(|word| shell_word(word.as_ref())).collect();
    quoted.join(" ")
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;
    use std::os::unix::ffi::OsStringExt;
    use std::process::Command;

    use super::*;

    #[test]
    fn numbers_are_printed_one_way() {
        assert_eq!(number(0.0), "0");
        assert_eq!(number(-0.0), "0");
        assert_eq!(number(0.5), "0.5");
        assert_eq!(number(1e-4), "1e-4");
        assert_eq!(number(2.384185791015625e-7), "2.38419e-7");
        assert_eq!(number(3.662604093551636e-2), "0.036626");
        assert_eq!(number(0.912397), "0.912397");
        assert_eq!(number(1.956e6), "1.956e6");
        assert_eq!(number(f64::NAN), "NaN");
        assert_eq!(number(f64::INFINITY), "inf");
    }

    #[test]
    fn counts_take_their_plural() {
        assert_eq!(counted(1, "iteration"), "1 iteration");
        assert_eq!(counted(0, "pair"), "0 pairs");
        assert_eq!(counted(2, "pair"), "2 pairs");
        assert_eq!(
            format!("{} {}", part_of(1, 1, "output"), differ(1)),
            "1 of 1 output differs"
        );
        assert_eq!(
            format!("{} {}", part_of(2, 3, "output"), differ(2)),
            "2 of 3 outputs differ"
        );
        assert_eq!(
            format!("{} {}", part_of(1, 3, "output"), differ(1)),
            "1 of 3 outputs differs"
        );
    }

    #[test]
    fn shows_hidden_characters_escaped() {
        assert_eq!(printable("输出 a/b\\c 'q'"), "输出 a/b\\c 'q'");
        assert_eq!(printable("line1\nline2"), "line1\\nline2");
        assert_eq!(printable("x\x1b[31mred\x07\t\r\u{85}"), "x\\x1b[31mred\\x07\\t\\r\\x85");
        assert_eq!(printable("abc\u{202e}def\u{200b}"), "abc\\u{202e}def\\u{200b}");
        assert_eq!(printable_lines("a\x1b[0m\nb\n"), "a\\x1b[0m\nb\n");
    }

    /// What bash reads back from each quoted word is the word, byte for byte.
    #[test]
    fn quotes_words_a_shell_reads_back_exactly() {
        let words: Vec<OsString> = [
            &b"plain-1.mge"[..],
            b"-m.mge",
            b"a b.mge",
            b"it's",
            b"#rand(0,1)",
            b"",
            b"~x",
            b"line1\nline2",
            b"x\x1b[31m\\'\x07",
            b"\xff\xfe.mge",
            "输出 \u{202e}".as_bytes(),
            b"$HOME `id` \"*\"",
        ]
        .iter()
        .map(|bytes| OsString::from_vec(bytes.to_vec()))
        .collect();
        assert_eq!(shell_word(&words[0]), "plain-1.mge");
        assert_eq!(shell_word(&words[3]), r"'it'\''s'");
        assert_eq!(shell_word(&words[7]), r"$'line1\x0aline2'");
        let line = shell_line(&words);
        assert!(!line.chars().any(is_hidden), "{line}");
        let script = format!("for word in {line}; do printf '%s\\0' \"$word\"; done");
        let output = Command::new("bash").arg("-c").arg(&script).output().unwrap();
        assert!(output.status.success(), "{line}");
        let read: Vec<&[u8]> = output.stdout.split(|&byte| byte == 0).collect();
        let expected: Vec<&[u8]> = words.iter().map(|word| word.as_bytes()).chain([&b""[..]]).collect();
        assert_eq!(read, expected, "{line}");
    }

    #[test]
    fn cut_keeps_both_ends_of_what_is_too_long() {
        assert_eq!(cut("short", 8), "short");
        let long = format!("head{}tail", "é".repeat(100));
        let shown = cut(&long, 16);
        assert!(shown.starts_with("head") && shown.ends_with("tail"), "{shown}");
        assert!(shown.contains(" bytes left out ...]"), "{shown}");
        let (start, end) = (shown.find("[... ").unwrap(), shown.find(" ...]").unwrap() + 5);
        let left_out: usize = shown[start + 5..].split(' ').next().unwrap().parse().unwrap();
        let kept = start + (shown.len() - end);
        assert!(kept <= 16, "{shown}");
        assert_eq!(kept + left_out, long.len());
    }
    #[test]
    fn paths_that_differ_in_bytes_that_are_not_utf8_read_apart() {
        let path = |bytes: &[u8]| std::path::PathBuf::from(OsString::from_vec(bytes.to_vec()));
        assert_eq!(path_text(&path(b"dir/bad\xff.mge")), r"dir/bad\xff.mge");
        assert_eq!(path_text(&path(b"bad\xfe.mge")), r"bad\xfe.mge");
        assert_eq!(path_text(&path("输入/é.mge".as_bytes())), "输入/é.mge");
    }

    /// What GitHub decodes in a workflow command, `%` first, and a table's
    /// cell delimiter, read literally.
    #[test]
    fn escapes_workflow_commands_and_markdown_cells() {
        assert_eq!(workflow_command_data("50%\r\n%0A: a,b"), "50%25%0D%0A%250A: a,b");
        assert_eq!(workflow_command_property("50%\n: a,b"), "50%25%0A%3A a%2Cb");
        assert_eq!(markdown_cell(r"a|b\*c_<d>"), r"a\|b\\\*c\_\<d\>");
    }
}
