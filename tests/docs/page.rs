//! A page's fenced blocks, read as the writers' section of docs/README.md
//! describes them: sessions (a block whose first line starts with `$ `) and
//! the commands of `sh` blocks.

use std::path::Path;

/// The HTML comment, on the line right before a session's fence, that keeps
/// the suite from running it: `<!-- not run: REASON -->`.
const NOT_RUN: &str = "<!-- not run:";

pub struct Page {
    /// The page's path from the repository root, as failures name it.
    pub path: String,
    pub text: String,
    pub blocks: Vec<Block>,
}

pub struct Block {
    /// The word after the opening fence (`text`, `sh`, or empty).
    pub language: String,
    /// The page's line number (from 1) of the block's first line.
    pub first_line: usize,
    pub lines: Vec<String>,
    /// Why a session is not run, when its fence follows `<!-- not run: REASON -->`.
    pub not_run: Option<String>,
}

/// One `$ COMMAND` of a session, and the lines it is shown to print.
pub struct Step {
    pub command: String,
    /// The page's line number of the `$` line.
    pub line: usize,
    pub expected: Vec<String>,
}

impl Page {
    pub fn read(root: &Path, path: &str) -> Page {
        let text = std::fs::read_to_string(root.join(path)).unwrap_or_else(|err| panic!("{path}: {err}"));
        let blocks = blocks_of(path, &text);
        Page {
            path: path.to_string(),
            text,
            blocks,
        }
    }

    pub fn sessions(&self) -> impl Iterator<Item = &Block> {
        self.blocks.iter().filter(|block| block.is_session())
    }
}

impl Block {
    pub fn is_session(&self) -> bool {
        self.lines.first().is_some_and(|line| line.starts_with("$ "))
    }

    /// The session's commands, each with the output lines that follow it.
    pub fn steps(&self) -> Vec<Step> {
        let mut steps: Vec<Step> = Vec::new();
        for (offset, line) in self.lines.iter().enumerate() {
            match (line.strip_prefix("$ "), steps.last_mut()) {
                (Some(command), _) => steps.push(Step {
                    command: command.to_string(),
                    line: self.first_line + offset,
                    expected: Vec::new(),
                }),
                (None, Some(step)) => step.expected.push(line.clone()),
                (None, None) => unreachable!("a session starts with a command"),
            }
        }
        steps
    }
}

fn blocks_of(path: &str, text: &str) -> Vec<Block> {
    let lines: Vec<&str> = text.lines().collect();
    let mut blocks = Vec::new();
    let mut index = 0;
    while index < lines.len() {
        let Some(language) = lines[index].trim_start().strip_prefix("```") else {
            index += 1;
            continue;
        };
        let indent = lines[index].len() - lines[index].trim_start().len();
        let not_run = index
            .checked_sub(1)
            .and_then(|before| lines[before].trim().strip_prefix(NOT_RUN))
            .map(|reason| {
                let reason = reason.trim_end_matches("-->").trim();
                assert!(!reason.is_empty(), "{path}:{index}: `{NOT_RUN} -->` says why");
                reason.to_string()
            });
        let first_line = index + 2;
        let end = (index + 1..lines.len())
            .find(|&at| lines[at].trim() == "```")
            .unwrap_or_else(|| panic!("{path}:{}: a fence that is never closed", index + 1));
        blocks.push(Block {
            language: language.trim().to_string(),
            first_line,
            lines: lines[index + 1..end]
                .iter()
                .map(|line| line.get(indent..).unwrap_or(line.trim_start()).to_string())
                .collect(),
            not_run,
        });
        index = end + 1;
    }
    blocks
}
