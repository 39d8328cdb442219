//! Which GPUs a runtime can run on, known before the engine loads. MegEngine
//! carries the `-gencode` flags it was built with as a string
//! (`MGE_CUDA_GENCODE`), and at model load refuses a GPU whose `sm_XY` is not
//! among their `code=sm_XY` (PTX notwithstanding): the same test is made here,
//! from that string read out of the library file and from the capability the
//! CUDA driver reports (`engine::cuda_driver`).

use std::path::Path;
use std::sync::LazyLock;

use anyhow::{bail, Result};
use regex::bytes::Regex as BytesRegex;

use super::architectures::{sm, Architectures};
use super::install_record::Record;
use super::installed::{installed, with_its_engine, Installed};
use super::version::Version;
use super::{elf, Located, Origin};
use crate::engine::{cuda_driver, Device, Driver, Gpu};

/// Where MegEngine's own wheels come from, beside the package registry.
pub const WHEEL_INDEX: &str = "https://megengine.org.cn/whl/mge.html";

/// MegEngine's own CUDA builds of 1.13 for x86-64 by local tag, and the
/// `sm_XY` each has kernels for (its `scripts/whl/manylinux2014/build_wheel_common.sh`
/// at v1.13.0); the package registry's 1.13.0 is the cu101 build.
const RELEASED_BUILDS: &[(&str, &[u32])] = &[
    ("cu101", &[52, 60, 61, 70, 75]),
    ("cu111", &[61, 70, 75, 80, 86]),
    ("cu114", &[61, 70, 75, 80, 86]),
    ("cu118", &[61, 70, 75, 80, 86, 89]),
];

/// The architecture list read from the runtime whose Lite library is
/// `lite_library`: from it, else from the engine beside it. Read without
/// loading either: only their `.rodata` (65 MB of the registry's 1.5 GB
/// engine), and only up to the list, a quarter of a megabyte into it there.
/// Empty when neither carries one (a build without CUDA, or a layout of its own).
pub fn scan(lite_library: &Path) -> Result<Architectures> {
    for library in with_its_engine(lite_library) {
        if let Some(gencode) = gencode_in(&library)? {
            return Ok(Architectures::parse(&gencode));
        }
    }
    Ok(Architectures::default())
}

/// The longest `-gencode` string taken.
const MAX_GENCODE: usize = 4096;

/// The NUL-terminated string holding the first `-gencode` flag in the
/// library's `.rodata` (the whole file where it has none).
fn gencode_in(library: &Path) -> Result<Option<String>> {
    static FLAG: LazyLock<BytesRegex> =
        LazyLock::new(|| BytesRegex::new(r"(-gencode|--generate-code)[ =]arch=compute_[0-9]").expect("valid"));
    elf::scan_rodata(library, MAX_GENCODE, |window, settled| {
        let flag = FLAG.find(window).filter(|flag| flag.start() < settled)?;
        let start = window[..flag.start()]
            .iter()
            .rposition(|&b| b == 0)
            .map_or(0, |nul| nul + 1)
            .max(flag.start().saturating_sub(MAX_GENCODE));
        let end = window[flag.start()..]
            .iter()
            .position(|&b| b == 0)
            .map_or(window.len(), |nul| flag.start() + nul)
            .min(flag.start() + MAX_GENCODE);
        Some(String::from_utf8_lossy(&window[start..end]).trim().to_string())
    })
}

/// The list of the install in `dir` as its record keeps it, else read from its library.
pub fn recorded_or_scanned(dir: Option<&Path>, lite_library: &Path) -> Result<Architectures> {
    let recorded = match dir {
        Some(dir) => Record::read(dir)?.and_then(|record| record.cuda_architectures),
        None => None,
    };
    match recorded {
        Some(architectures) => Ok(architectures),
        None => scan(lite_library),
    }
}

fn architectures_of(install: &Installed) -> Result<Architectures> {
    recorded_or_scanned(Some(&install.dir), &install.lite_library())
}

/// Refuses `device`, before the engine loads, when it is a GPU the runtime
/// has no kernels for, or no GPU at all: one line that says what there is and
/// the way out. Costs nothing for the CPU, and `cuInit` for a GPU.
pub fn ensure_runs_on(located: &Located, device: Device) -> Result<()> {
    let Device::Cuda(id) = device else {
        return Ok(());
    };
    let flag = format!("--device {device}");
    let visible = match std::env::var("CUDA_VISIBLE_DEVICES") {
        Ok(visible) => format!(" (CUDA_VISIBLE_DEVICES={visible})"),
        Err(_) => String::new(),
    };
    let gpus = match cuda_driver() {
        Driver::Absent(_) => bail!("{flag}: no NVIDIA driver here (libcuda.so.1 cannot be loaded); use --device cpu"),
        Driver::Failed { call, code, name } => {
            let name = name.as_deref().map(|name| format!(" ({name})")).unwrap_or_default();
            bail!("{flag}: the NVIDIA driver failed: {call} returned {code}{name}; nvidia-smi may tell why, or use --device cpu")
        }
        Driver::Ready { gpus, .. } => gpus,
    };
    let gpu = match gpus.get(id as usize) {
        Some(gpu) => gpu,
        None if gpus.is_empty() => bail!("{flag}: the NVIDIA driver sees no GPU{visible}; use --device cpu"),
        None if gpus.len() == 1 => bail!("{flag}: there is one GPU, cuda:0{visible}"),
        None => bail!(
            "{flag}: there are {} GPUs, cuda:0 to cuda:{}{visible}",
            gpus.len(),
            gpus.len() - 1
        ),
    };
    let architectures = recorded_or_scanned(located.install.as_deref(), &located.path)?;
    if architectures.is_unknown() || architectures.runs_on(gpu.capability) {
        return Ok(());
    }
    bail!(
        "{flag}: {} is {}, and {} has kernels for {} only; {}",
        gpu.name,
        sm(gpu.capability),
        runtime_name(located),
        architectures.sass.join(" "),
        way_out(gpu, located)
    )
}

/// The version of the install `located` is, if it is one of the cache's.
fn version_of(located: &Located) -> Option<Version> {
    Version::parse(located.install.as_deref()?.file_name()?.to_str()?)
}

/// `MegEngine 1.13.0`, or the library's path when it is not one of the cache's.
fn runtime_name(located: &Located) -> String {
    match version_of(located) {
        Some(version) => format!("MegEngine {version}"),
        None => format!("the runtime {}", located.path.display()),
    }
}

/// An installed runtime that runs on `gpu`, else MegEngine's build that does
/// and how to install it, else how to build one.
fn way_out(gpu: &Gpu, located: &Located) -> String {
    let instead = match located.origin {
        Origin::Option => "drop --lite-lib and add",
        _ => "add",
    };
    // The newest of the others (this one was just found wanting).
    let installs = super::home().map(|home| installed(&home)).unwrap_or_default();
    let fitting = installs
        .into_iter()
        .rev()
        .filter(|install| located.install.as_deref() != Some(install.dir.as_path()))
        .find(|install| architectures_of(install).is_ok_and(|found| found.runs_on(gpu.capability)));
    if let Some(install) = fitting {
        return format!(
            "MegEngine {} is installed and runs on it: {instead} --runtime-version {} (or set MGE_RUNTIME_VERSION)",
            install.version, install.version
        );
    }
    let number = gpu.capability.0 * 10 + gpu.capability.1;
    let version = version_of(located);
    let release = version.as_ref().map_or(super::DEFAULT_VERSION, Version::release);
    match RELEASED_BUILDS.iter().rev().find(|(_, sms)| sms.contains(&number)) {
        Some((tag, _)) => format!(
            "MegEngine's {tag} builds run on it: `mge runtime install --find-links {WHEEL_INDEX} --version {release}+{tag}` (docs/runtime.md: GPUs and MegEngine builds)"
        ),
        None => format!(
            "no MegEngine release has kernels for {}: build it from source with -DMGE_CUDA_GENCODE=\"-gencode arch=compute_{number},code=sm_{number}\" and give its Lite library with --lite-lib (docs/runtime.md: GPUs and MegEngine builds), or use --device cpu",
            sm(gpu.capability)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::architectures::tests::CU101;
    use crate::runtime::elf::CHUNK;

    #[test]
    fn the_list_is_found_in_a_file_across_chunks_and_without_sections() {
        let dir = tempfile::tempdir().unwrap();
        for at in [0, 17, CHUNK - 30, CHUNK - MAX_GENCODE + 1, 3 * CHUNK] {
            let mut bytes = vec![7u8; at];
            bytes.push(0);
            bytes.extend_from_slice(CU101.as_bytes());
            bytes.push(0);
            bytes.extend(vec![9u8; 100]);
            let library = dir.path().join("libmegengine_shared.so");
            std::fs::write(&library, &bytes).unwrap();
            assert_eq!(gencode_in(&library).unwrap().as_deref(), Some(CU101.trim()), "at {at}");
        }
        std::fs::write(dir.path().join("libmegengine_shared.so"), vec![0u8; 3 * CHUNK]).unwrap();
        assert_eq!(gencode_in(&dir.path().join("libmegengine_shared.so")).unwrap(), None);
    }
}
