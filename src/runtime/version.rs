//! MegEngine's version numbers as install folders are named: a release number
//! and maybe a local tag for the build (`1.13.0`, `1.13.2+cu118`), as PEP 440
//! spells and orders them. A version names a folder, so nothing else passes:
//! no `/`, no `..`, no empty part.

use std::cmp::Ordering;
use std::fmt;

/// The longest version taken: MegEngine's are under 40 characters.
const MAX_LEN: usize = 64;

/// Equal as PEP 440 says: `1.13`, `1.13.0`, `01.13.0` and `1.13.0.0` are one
/// release (`Ord`).
#[derive(Clone, Debug)]
pub struct Version {
    /// As pip writes it: the release's numbers without leading zeros, the
    /// local tag lowercase, its parts joined by `.`.
    text: String,
    release: Vec<u64>,
    local: Vec<LocalPart>,
}

/// One part of a local tag: PEP 440 orders numbers above words.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum LocalPart {
    Word(String),
    Number(u64),
}

impl Version {
    /// `None` for anything but `N(.N)*[+LOCAL]`, LOCAL being letters and
    /// digits in parts joined by `.`, `_` or `-`.
    pub fn parse(text: &str) -> Option<Version> {
        if text.len() > MAX_LEN {
            return None;
        }
        let (release_text, local_text) = match text.split_once('+') {
            Some((release, local)) => (release, Some(local)),
            None => (text, None),
        };
        let release = release_text
            .split('.')
            .map(
                |part| match !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()) {
                    true => part.parse().ok(),
                    false => None,
                },
            )
            .collect::<Option<Vec<u64>>>()?;
        let local_parts: Vec<String> = match local_text {
            Some(local) => local
                .split(['.', '_', '-'])
                .map(
                    |part| match !part.is_empty() && part.bytes().all(|b| b.is_ascii_alphanumeric()) {
                        true => Some(part.to_ascii_lowercase()),
                        false => None,
                    },
                )
                .collect::<Option<_>>()?,
            None => Vec::new(),
        };
        let local = local_parts
            .iter()
            .map(|part| match part.bytes().all(|b| b.is_ascii_digit()) {
                true => part.parse().map(LocalPart::Number).ok(),
                false => Some(LocalPart::Word(part.clone())),
            })
            .collect::<Option<_>>()?;
        let release_text = release.iter().map(u64::to_string).collect::<Vec<_>>().join(".");
        let text = match local_text {
            Some(_) => format!("{release_text}+{}", local_parts.join(".")),
            None => release_text,
        };
        Some(Version { text, release, local })
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The release as the Lite library reports it (`LITE_get_version`): its first three numbers.
    pub fn release_triple(&self) -> (u64, u64, u64) {
        let part = |i: usize| self.release.get(i).copied().unwrap_or(0);
        (part(0), part(1), part(2))
    }

    /// The release without the build's local tag: `1.13.2` of `1.13.2+cu118`.
    pub fn release(&self) -> &str {
        self.text.split_once('+').map_or(&self.text, |(release, _)| release)
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Ord for Version {
    /// PEP 440's order: by release (`1.13` equals `1.13.0`), then a local tag
    /// above none, tags part by part.
    fn cmp(&self, other: &Version) -> Ordering {
        let len = self.release.len().max(other.release.len());
        let padded = |release: &[u64]| {
            (0..len)
                .map(|i| release.get(i).copied().unwrap_or(0))
                .collect::<Vec<_>>()
        };
        padded(&self.release)
            .cmp(&padded(&other.release))
            .then_with(|| self.local.cmp(&other.local))
    }
}

impl PartialEq for Version {
    fn eq(&self, other: &Version) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Version {}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Version) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn version(text: &str) -> Version {
        Version::parse(text).unwrap_or_else(|| panic!("{text} parses"))
    }

    #[test]
    fn releases_and_local_tags_parse_and_nothing_else_does() {
        assert_eq!(version("1.13.0").as_str(), "1.13.0");
        assert_eq!(version("1.13.0").release(), "1.13.0");
        assert_eq!(version("1.13.2+cu118").release(), "1.13.2");
        // As pip normalizes MegEngine's `cu111_cudnn821_tensorRT825` builds.
        assert_eq!(
            version("1.13.0+cu111_cudnn821_tensorRT825").as_str(),
            "1.13.0+cu111.cudnn821.tensorrt825"
        );
        assert_eq!(version("1.13.2+cu118").release_triple(), (1, 13, 2));
        for bad in [
            "",
            "1.",
            ".1",
            "1..2",
            "../x",
            "1.13.0/..",
            "1.13.0+",
            "1.13.0+cu/118",
            "1.13.0+..",
            "1.13.0+a..b",
            "1.13.0 ",
            "v1.13.0",
            "1.13.0rc1",
            "1.13.0+cu118+x",
            "/1.13",
        ] {
            assert_eq!(Version::parse(bad), None, "{bad:?}");
        }
        assert_eq!(Version::parse(&"1".repeat(65)), None);
    }

    #[test]
    fn versions_order_as_pep_440_says() {
        let ordered = [
            "1.9.1",
            "1.13",
            "1.13.0+cpu",
            "1.13.0+cu101",
            "1.13.0+cu118",
            "1.13.1",
            "1.13.2+cu111",
        ];
        for pair in ordered.windows(2) {
            assert!(version(pair[0]) < version(pair[1]), "{} < {}", pair[0], pair[1]);
        }
        // One release however it is spelled; pip's spelling names it.
        for same in ["1.13", "1.13.0", "01.13.0", "1.13.0.0", "1.013.00"] {
            assert_eq!(version(same), version("1.13.0"), "{same}");
        }
        assert_eq!(version("01.13.0").as_str(), "1.13.0");
        assert_eq!(version("1.13.0+CU118"), version("1.13.0+cu118"));
        assert_ne!(version("1.13.0+cu118"), version("1.13.0"));
        assert_ne!(version("1.13.1"), version("1.13"));
        // A number outranks a word, and a longer tag with the same start the shorter.
        assert!(version("1.13.0+cu") < version("1.13.0+7"));
        assert!(version("1.13.0+cu118") < version("1.13.0+cu118.1"));
    }
}
