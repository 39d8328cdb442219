//! The `mge` command lines a page shows without running them (its `sh` blocks
//! and the sessions marked not run), each parsed by mge itself:
//! `mge ARGS --help` parses ARGS as a run would (every flag exists, every
//! value is one its flag takes) and then prints the help instead of running.

use super::page::Page;

/// One `mge` command of a page, its words after `mge`.
pub struct CommandLine {
    pub line: usize,
    pub words: Vec<String>,
}

impl CommandLine {
    /// The words mge is given to parse them only: `--help` after the last
    /// option, before a `--` that ends them.
    pub fn parse_only(&self) -> Vec<String> {
        let mut words = self.words.clone();
        let at = words.iter().position(|word| word == "--").unwrap_or(words.len());
        words.insert(at, "--help".to_string());
        words
    }
}

/// Every `mge` command of the page's `sh` blocks and not-run sessions.
pub fn command_lines(page: &Page) -> Vec<CommandLine> {
    let mut lines = Vec::new();
    for block in &page.blocks {
        let shown: Vec<(usize, String)> = if block.language == "sh" {
            let numbered = block.lines.iter().enumerate();
            numbered
                .map(|(at, line)| (block.first_line + at, line.clone()))
                .collect()
        } else if block.is_session() && block.not_run.is_some() {
            block
                .steps()
                .into_iter()
                .map(|step| (step.line, step.command))
                .collect()
        } else {
            continue;
        };
        for (line, text) in shown {
            let words =
                shlex::split(&text).unwrap_or_else(|| panic!("{}:{line}: quotes that do not close: {text}", page.path));
            for words in mge_commands(&words) {
                lines.push(CommandLine { line, words });
            }
        }
    }
    lines
}

/// The `mge` commands of one shell line (`cargo run --release -- ARGS` is
/// one too): the words of each, up to a redirection. In a synopsis,
/// `[...]` marks optional words and `a|b` alternatives: the words are kept
/// and the first alternative taken.
fn mge_commands(words: &[String]) -> Vec<Vec<String>> {
    let words = unbracketed(words);
    let mut commands = Vec::new();
    for segment in words.split(|word| ["&&", "||", "|", ";"].contains(&word.as_str())) {
        let program = segment
            .iter()
            .position(|word| !word.contains('='))
            .unwrap_or(segment.len());
        let args = match &segment[program..] {
            [mge, args @ ..] if mge == "mge" || mge.ends_with("/mge") => args,
            [cargo, run, release, dashes, args @ ..]
                if [cargo, run, release, dashes] == ["cargo", "run", "--release", "--"] =>
            {
                args
            }
            _ => continue,
        };
        let end = args
            .iter()
            .position(|word| word.starts_with('>') || word == "<")
            .unwrap_or(args.len());
        let args = args[..end]
            .iter()
            .map(|word| word.split('|').next().unwrap_or(word).to_string());
        commands.push(args.collect());
    }
    commands
}

/// A synopsis's words without its brackets and the `|` between bracketed
/// alternatives (`[--wheel FILE | --find-links URL]`).
fn unbracketed(words: &[String]) -> Vec<String> {
    let mut depth = 0usize;
    let mut kept = Vec::new();
    for word in words {
        let opens = word.starts_with('[');
        depth += usize::from(opens);
        let closes = depth > 0 && word.ends_with(']');
        if !(depth > 0 && word == "|") {
            let word = if opens { &word[1..] } else { word.as_str() };
            let word = if closes {
                word.strip_suffix(']').unwrap_or(word)
            } else {
                word
            };
            kept.push(word.to_string());
        }
        depth -= usize::from(closes);
    }
    kept
}
