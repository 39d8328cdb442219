//! The CUDA architectures an engine was built for, as its `-gencode` flags
//! name them (`cuda` reads them out of the library): the GPUs it runs on.

use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

/// The CUDA architectures an engine was built for.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Architectures {
    /// `sm_XY` with kernels compiled for them: the only GPUs the engine runs on.
    pub sass: Vec<String>,
    /// `compute_XY` carried as PTX, which the engine does not use to run on newer GPUs.
    pub ptx: Vec<String>,
}

/// `sm_90` for capability 9.0, as the engine names it (major * 10 + minor).
pub fn sm(capability: (u32, u32)) -> String {
    format!("sm_{}", capability.0 * 10 + capability.1)
}

impl Architectures {
    /// From the `-gencode arch=compute_XY,code=sm_XY ...` flags; `code=[sm_XY,compute_XY]` too.
    pub fn parse(gencode: &str) -> Architectures {
        static CODE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"code=\[?([A-Za-z0-9_,]+)").expect("valid"));
        let mut found = Architectures::default();
        for code in CODE.captures_iter(gencode) {
            for target in code[1].split(',') {
                let list = match target.split_once('_') {
                    Some(("sm", digits)) if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => {
                        &mut found.sass
                    }
                    Some(("compute", digits)) if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => {
                        &mut found.ptx
                    }
                    _ => continue,
                };
                if !list.iter().any(|known| known == target) {
                    list.push(target.to_string());
                }
            }
        }
        found
    }

    /// No list was found: the engine judges alone.
    pub fn is_unknown(&self) -> bool {
        self.sass.is_empty() && self.ptx.is_empty()
    }

    pub fn runs_on(&self, capability: (u32, u32)) -> bool {
        self.sass.contains(&sm(capability))
    }

    /// `sm_52 sm_60 sm_61 sm_70 sm_75 (PTX compute_75)`.
    pub fn to_text(&self) -> String {
        let mut text = self.sass.join(" ");
        if !self.ptx.is_empty() {
            text += &format!(" (PTX {})", self.ptx.join(" "));
        }
        text
    }
}

#[cfg(test)]
pub mod tests {
    use super::*;

    /// The registry's 1.13.0, as its engine carries it.
    pub const CU101: &str = " -gencode arch=compute_52,code=sm_52 -gencode arch=compute_60,code=sm_60 -gencode arch=compute_61,code=sm_61 -gencode arch=compute_70,code=sm_70 -gencode arch=compute_75,code=sm_75 -gencode arch=compute_75,code=compute_75";

    #[test]
    fn the_gencode_flags_give_kernels_and_ptx() {
        let found = Architectures::parse(CU101);
        assert_eq!(found.sass, ["sm_52", "sm_60", "sm_61", "sm_70", "sm_75"]);
        assert_eq!(found.ptx, ["compute_75"]);
        assert!(found.runs_on((7, 5)) && !found.runs_on((8, 6)) && !found.runs_on((9, 0)));
        assert_eq!(found.to_text(), "sm_52 sm_60 sm_61 sm_70 sm_75 (PTX compute_75)");
        let bracketed = Architectures::parse("--generate-code=arch=compute_90,code=[sm_90,compute_90]");
        assert_eq!(
            (bracketed.sass, bracketed.ptx),
            (vec!["sm_90".into()], vec!["compute_90".into()])
        );
        assert!(Architectures::parse("").is_unknown());
        assert_eq!(sm((10, 0)), "sm_100");
    }
}
