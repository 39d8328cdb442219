//! The engine's io dump (every var one run produces) as `mge dump --io` keeps
//! it: a `.npy` file per var and `index.json`, which lists the vars in
//! execution order with the operator that made each. `index` is that format,
//! which `mge compare` reads to match two dumps; `convert` makes it from what
//! the engine wrote; `raw` reads the engine's files as another machine left
//! them, without an index; `failed` makes it of a run the engine refused
//! part way, and says where it stopped.

mod convert;
mod failed;
mod index;
mod raw;

pub use convert::{convert_binary, index_text, read_binary, Converted};
pub use failed::{failed_at, text_vars};
pub use index::{read_index, Heading, Index, IndexVar, TEXT_FILE};
pub use raw::{read_raw_index, refuse_unless_raw, RAW_FORMAT};

/// How `dump --io` keeps every var of a run: a `.npy` file per var, or the
/// engine's own text dump.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DumpFormat {
    Binary,
    Text,
}
