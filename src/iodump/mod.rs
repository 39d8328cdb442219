//! The engine's io dump (every var one run produces) as `mge dump --io` keeps
//! it: a `.npy` file per var and `index.json`, which lists the vars in
//! execution order with the operator that made each. `index` is that format,
//! which `mge compare` reads to match two dumps; `convert` makes it from what
//! the engine wrote.

mod convert;
mod index;

pub use convert::{convert_binary, index_text, Converted};
pub use index::{read_index, Index, IndexVar, TEXT_FILE};
