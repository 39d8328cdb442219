//! The decryption methods MegEngine Lite 1.13 registers at load
//! (`lite/src/decryption/`), and what each needs from its key and its input.
//! Lite checks neither: a short key or a malformed length field is read out
//! of bounds, so both are checked here before the engine sees them.

use std::fmt;

use anyhow::{bail, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// AES-256-CBC: `IV(16) || ciphertext || u64 big-endian plain length`.
    Aes,
    /// RC4 in 8-byte words with a keyed hash appended.
    Rc4,
    /// As `Rc4`, with the hash checked before decrypting.
    SimpleFastRc4,
}

/// The method name of data that is not encrypted.
pub const NO_ENCRYPTION: &str = "NONE";

impl Method {
    pub const ALL: [Method; 3] = [Method::Aes, Method::Rc4, Method::SimpleFastRc4];

    /// The name Lite registers the method under.
    pub fn name(self) -> &'static str {
        match self {
            Method::Aes => "AES_default",
            Method::Rc4 => "RC4_default",
            Method::SimpleFastRc4 => "SIMPLE_FAST_RC4_default",
        }
    }

    pub fn from_name(name: &str) -> Option<Method> {
        Method::ALL.into_iter().find(|method| method.name() == name)
    }

    /// AES-256 reads 32 key bytes; the RC4 methods read a hash key and an
    /// encryption key, 8 bytes each, and ignore the rest.
    pub fn check_key(self, key: &[u8]) -> Result<()> {
        match self {
            Method::Aes if key.len() != 32 => {
                bail!("{self} takes a key of exactly 32 bytes, this one has {}", key.len())
            }
            Method::Rc4 | Method::SimpleFastRc4 if key.len() < 16 => {
                bail!("{self} takes a key of at least 16 bytes, this one has {}", key.len())
            }
            _ => Ok(()),
        }
    }

    /// Checks that `data` is framed as this method writes it, so that Lite's
    /// decryption stays inside it.
    pub fn check_framing(self, data: &[u8]) -> Result<()> {
        let size = data.len();
        match self {
            Method::Aes => {
                // IV, at least one block, the length.
                if size < 40 || !(size - 24).is_multiple_of(16) {
                    bail!(
                        "{size} bytes cannot be {self} data: a 16-byte IV, whole 16-byte blocks and an 8-byte length"
                    );
                }
                let length = u64::from_be_bytes(data[size - 8..].try_into().unwrap());
                // Lite reads the length into an int, and keeps that many bytes of the blocks.
                if length > (size - 24) as u64 || length >= 1 << 31 {
                    bail!(
                        "{self} data says it holds {length} bytes, but its blocks hold {}",
                        size - 24
                    );
                }
            }
            Method::Rc4 | Method::SimpleFastRc4 => {
                if size < 16 || !size.is_multiple_of(8) {
                    bail!("{size} bytes cannot be {self} data: whole 8-byte words and an 8-byte hash");
                }
            }
        }
        Ok(())
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_must_have_the_length_the_method_reads() {
        assert!(Method::Aes.check_key(&[0; 32]).is_ok());
        assert!(Method::Aes.check_key(&[0; 16]).is_err());
        assert!(Method::Aes.check_key(&[0; 33]).is_err());
        assert!(Method::Rc4.check_key(&[0; 16]).is_ok());
        assert!(Method::SimpleFastRc4.check_key(&[0; 128]).is_ok());
        assert!(Method::SimpleFastRc4.check_key(&[0; 15]).is_err());
    }

    #[test]
    fn framing_keeps_decryption_inside_the_data() {
        let mut aes = vec![0u8; 16 + 32 + 8];
        aes[48..].copy_from_slice(&20u64.to_be_bytes());
        assert!(Method::Aes.check_framing(&aes).is_ok());
        aes[48..].copy_from_slice(&33u64.to_be_bytes());
        assert!(Method::Aes.check_framing(&aes).is_err());
        assert!(Method::Aes.check_framing(&aes[..50]).is_err());
        assert!(Method::Rc4.check_framing(&[0; 24]).is_ok());
        assert!(Method::Rc4.check_framing(&[0; 20]).is_err());
        assert!(Method::SimpleFastRc4.check_framing(&[0; 8]).is_err());
    }
}
