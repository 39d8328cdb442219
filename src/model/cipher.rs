//! The decryption methods MegEngine Lite 1.13 registers at load
//! (`lite/src/decryption/`), and what each needs from its key and its input.
//! Lite checks neither: a short key or a malformed length field is read out
//! of bounds, so both are checked here before the engine sees them. Each
//! method decrypts here as Lite decrypts it, with its built-in key or the
//! user's, so that a graph is read from the file alone (`compare --structure`).

use std::fmt;

use aes::Aes256;
use anyhow::{anyhow, bail, Result};
use cbc::cipher::block_padding::NoPadding;
use cbc::cipher::{BlockDecryptMut, KeyIvInit};

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

impl Method {
    /// The key Lite registers the method with (`get_decrypt_key`): AES's
    /// bytes 0 to 31; the RC4 methods' 128 bytes, the hash key's 8 and the
    /// encryption key's 8 first (each a little-endian u64), zeros after.
    pub fn built_in_key(self) -> Vec<u8> {
        match self {
            Method::Aes => (0..32).collect(),
            Method::Rc4 | Method::SimpleFastRc4 => {
                let mut key = vec![0; 128];
                key[..8].copy_from_slice(&RC4_HASH_KEY);
                key[8..16].copy_from_slice(&RC4_ENCRYPTION_KEY);
                key
            }
        }
    }

    /// How many zero bytes may follow the model in what `decrypt` returns:
    /// the RC4 methods encrypt 8-byte words, the last one zero-padded, and
    /// keep no length; AES keeps the plain length.
    pub fn padding(self) -> usize {
        match self {
            Method::Aes => 0,
            Method::Rc4 | Method::SimpleFastRc4 => 7,
        }
    }

    /// `data` decrypted with `key` as Lite decrypts it, the trailer (AES's
    /// IV and length, the RC4 methods' hash) left out. A wrong key is told
    /// where the method can tell it: SIMPLE_FAST_RC4's checksum of the
    /// encrypted words (Lite's own check), RC4's keyed hash of the plain ones
    /// (which its encryption mixes into the key of the inner stream). AES
    /// holds no such check (Lite neither checks its padding, which
    /// `aes_encrypt.sh` makes PKCS#7 but another tool need not): what it
    /// decrypts to is told by the graph's own check. Decrypted in place: a
    /// model of gigabytes needs no more memory than its file.
    pub fn decrypt(self, mut data: Vec<u8>, key: &[u8]) -> Result<Vec<u8>> {
        self.check_key(key)?;
        self.check_framing(&data)?;
        match self {
            Method::Aes => {
                let iv: [u8; 16] = data[..16].try_into().expect("16 bytes");
                let size = data.len();
                let length = u64::from_be_bytes(data[size - 8..].try_into().expect("8 bytes")) as usize;
                data.truncate(size - 8);
                data.drain(..16);
                cbc::Decryptor::<Aes256>::new_from_slices(key, &iv)
                    .map_err(|_| anyhow!("{self}: a 32-byte key and a 16-byte IV"))?
                    .decrypt_padded_mut::<NoPadding>(&mut data)
                    .map_err(|_| anyhow!("{self}: whole 16-byte blocks"))?;
                data.truncate(length);
            }
            Method::Rc4 | Method::SimpleFastRc4 => {
                let hash = u64::from_le_bytes(data[data.len() - 8..].try_into().expect("8 bytes"));
                data.truncate(data.len() - 8);
                let (hash_key, encryption_key) = rc4_keys(key);
                let mut body = Words(&mut data);
                match self {
                    Method::Rc4 => rc4_decrypt(&mut body, hash, hash_key, encryption_key)?,
                    _ => simple_fast_rc4_decrypt(&mut body, hash, hash_key, encryption_key)?,
                }
            }
        }
        Ok(data)
    }
}

/// Bytes as the little-endian 8-byte words the RC4 methods encrypt, changed in place.
struct Words<'a>(&'a mut [u8]);

impl Words<'_> {
    fn values(&self) -> impl Iterator<Item = u64> + '_ {
        self.0
            .chunks_exact(8)
            .map(|word| u64::from_le_bytes(word.try_into().expect("8 bytes")))
    }

    /// Replaces each word by what `change` makes of it, in order.
    fn each(&mut self, mut change: impl FnMut(u64) -> u64) {
        for word in self.0.chunks_exact_mut(8) {
            let value = u64::from_le_bytes((&*word).try_into().expect("8 bytes"));
            word.copy_from_slice(&change(value).to_le_bytes());
        }
    }
}

/// The RC4 methods' built-in keys (`rc4_cryption_base.h`), as little-endian bytes.
const RC4_HASH_KEY: [u8; 8] = [108, 105, 101, 106, 103, 102, 107, 104];
const RC4_ENCRYPTION_KEY: [u8; 8] = [124, 127, 126, 121, 120, 125, 123, 122];

/// The hash key and the encryption key an RC4 method reads from the first
/// 16 bytes of its key (checked by `check_key`).
fn rc4_keys(key: &[u8]) -> (u64, u64) {
    let word = |at: usize| u64::from_le_bytes(key[at..at + 8].try_into().expect("8 bytes"));
    (word(0), word(8))
}

/// RC4_default: each word was hidden twice, under a stream keyed by the
/// keyed hash of the plain words, then under one keyed by the encryption
/// key; the last word (`hash`) holds that hash mixed with the hash of the
/// words between the two. The outer stream and the hash of what it reveals
/// give the plain hash back, which keys the inner stream; the plain words
/// must then hash to it.
fn rc4_decrypt(body: &mut Words, hash: u64, hash_key: u64, encryption_key: u64) -> Result<()> {
    let mut outer = Rc4Stream::new(encryption_key);
    let mut between = FastHash::new(hash_key);
    body.each(|word| {
        let inner = word ^ outer.next_word();
        between.feed(inner);
        inner
    });
    let plain_hash = hash ^ between.value ^ outer.next_word();
    let mut inner = Rc4Stream::new(plain_hash);
    let mut check = FastHash::new(hash_key);
    body.each(|word| {
        let plain = word ^ inner.next_word();
        check.feed(plain);
        plain
    });
    if check.value != plain_hash {
        bail!("the decrypted words do not match their keyed hash");
    }
    Ok(())
}

/// SIMPLE_FAST_RC4_default: one stream keyed by the encryption key; the
/// last word (`hash`) is the keyed hash of the encrypted ones, checked first as Lite does.
fn simple_fast_rc4_decrypt(body: &mut Words, hash: u64, hash_key: u64, encryption_key: u64) -> Result<()> {
    let mut checksum = FastHash::new(hash_key);
    body.values().for_each(|word| checksum.feed(word));
    if checksum.value != hash {
        bail!("the encrypted words do not match their checksum");
    }
    let mut stream = Rc4Stream::new(encryption_key);
    body.each(|word| word ^ stream.next_word());
    Ok(())
}

/// Lite's RC4 (`rc4::RC4RandStream`): RC4's key schedule over the 8 bytes of
/// a little-endian u64, an output byte mixed from three state bytes rather
/// than one, and the first 768 bytes dropped, then as many as the next says.
struct Rc4Stream {
    state: [u8; 256],
    i: u8,
    j: u8,
}

impl Rc4Stream {
    fn new(key: u64) -> Rc4Stream {
        let key = key.to_le_bytes();
        let mut state: [u8; 256] = std::array::from_fn(|at| at as u8);
        let mut j = 0u8;
        for at in 0..256 {
            j = j.wrapping_add(state[at]).wrapping_add(key[at % 8]);
            state.swap(at, usize::from(j));
        }
        let mut stream = Rc4Stream { state, i: 0, j: 0 };
        for _ in 0..768 {
            stream.next_byte();
        }
        for _ in 0..stream.next_byte() {
            stream.next_byte();
        }
        stream
    }

    fn next_byte(&mut self) -> u8 {
        let state = &mut self.state;
        self.i = self.i.wrapping_add(1);
        let a = state[usize::from(self.i)];
        self.j = self.j.wrapping_add(a);
        let b = state[usize::from(self.j)];
        state[usize::from(self.i)] = b;
        state[usize::from(self.j)] = a;
        let (i, j) = (self.i, self.j);
        let c = state[usize::from((i << 5) ^ (j >> 3))].wrapping_add(state[usize::from((j << 5) ^ (i >> 3))]);
        state[usize::from(a.wrapping_add(b))].wrapping_add(state[usize::from(c ^ 0xAA)])
            ^ state[usize::from(j.wrapping_add(b))]
    }

    /// Eight bytes, the first the lowest.
    fn next_word(&mut self) -> u64 {
        u64::from_le_bytes(std::array::from_fn(|_| self.next_byte()))
    }
}

/// fast-hash's 64-bit mix (`rc4::FastHash64`), seeded with the hash key.
struct FastHash {
    value: u64,
}

impl FastHash {
    const MUL0: u64 = u64::from_le_bytes([55, 92, 50, 244, 155, 89, 39, 33]);
    const MUL1: u64 = u64::from_le_bytes([101, 25, 109, 30, 242, 85, 3, 136]);

    fn new(seed: u64) -> FastHash {
        FastHash { value: seed }
    }

    fn feed(&mut self, word: u64) {
        let mut mixed = word ^ (word >> 23);
        mixed = mixed.wrapping_mul(FastHash::MUL0);
        mixed ^= mixed >> 47;
        self.value = (self.value ^ mixed).wrapping_mul(FastHash::MUL1);
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

    fn fixture(name: &str) -> Vec<u8> {
        std::fs::read(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("fixtures")
                .join(name),
        )
        .unwrap()
    }

    /// Each bare fixture, encrypted by `make_deploy_fixtures.py` as Lite's
    /// tools do (and loaded by Lite with the built-in keys when made),
    /// decrypts to the model that was encrypted, to the byte (2728 bytes:
    /// whole RC4 words, no padding).
    #[test]
    fn the_fixtures_decrypt_to_the_model_with_the_built_in_keys() {
        let plain = fixture("conv_float.mge");
        for (file, method) in [
            ("conv_float_aes.emod", Method::Aes),
            ("conv_float_rc4.emod", Method::Rc4),
            ("conv_float_sfrc4.emod", Method::SimpleFastRc4),
        ] {
            let encrypted = fixture(&format!("deploy/{file}"));
            let decrypted = method.decrypt(encrypted, &method.built_in_key()).unwrap();
            assert!(decrypted == plain, "{file}");
        }
    }

    /// The keys `deploy_manifest.json` records as read out of Lite's sources.
    #[test]
    fn the_built_in_keys_are_lites() {
        let manifest: serde_json::Value = serde_json::from_slice(&fixture("deploy_manifest.json")).unwrap();
        for method in Method::ALL {
            let recorded = manifest["notes"]["decryption_keys"][method.name()].as_str().unwrap();
            let hex: String = method.built_in_key().iter().map(|byte| format!("{byte:02x}")).collect();
            assert_eq!(hex, recorded, "{method}");
        }
    }

    /// The keys the manifest's wrong-key cases gave Lite: all zeros, and the
    /// RC4 methods' right hash key with a zero encryption key. The RC4
    /// methods tell them by a hash; AES decrypts to garbage the graph's
    /// check refuses (`ModelFile::model_graph`).
    #[test]
    fn the_rc4_methods_tell_a_wrong_key_by_a_hash() {
        let mut right_hash_key = vec![0; 128];
        right_hash_key[..8].copy_from_slice(&RC4_HASH_KEY);
        for (file, method, message) in [
            ("conv_float_rc4.emod", Method::Rc4, "do not match their keyed hash"),
            (
                "conv_float_sfrc4.emod",
                Method::SimpleFastRc4,
                "do not match their checksum",
            ),
        ] {
            let encrypted = fixture(&format!("deploy/{file}"));
            let err = method.decrypt(encrypted.clone(), &[0; 128]).unwrap_err();
            assert!(err.to_string().contains(message), "{file}: {err}");
            let wrong = method.decrypt(encrypted, &right_hash_key);
            match method {
                // Its checksum is of the encrypted words, under the hash key alone.
                Method::SimpleFastRc4 => assert!(wrong.unwrap() != fixture("conv_float.mge")),
                _ => assert!(wrong.unwrap_err().to_string().contains(message), "{file}"),
            }
        }
        let aes = fixture("deploy/conv_float_aes.emod");
        assert!(Method::Aes.decrypt(aes.clone(), &[0; 32]).unwrap() != fixture("conv_float.mge"));
        assert!(Method::Aes.decrypt(aes, &[0; 16]).is_err());
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
