//! The MegEngine Lite runtime behind a small safe API. This module (with `ffi`,
//! `stdio` and `process`) holds the only `unsafe` code of the crate.

mod affinity;
mod cuda_driver;
mod env_numbers;
mod exit_trap;
pub mod fast_run_file;
mod ffi;
mod log_watch;
mod process;
mod stdio;

use std::ffi::{CStr, CString};
use std::fmt;
use std::os::raw::{c_char, c_int, c_void};
use std::path::{Path, PathBuf};
use std::ptr;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use libloading::Library;

use crate::input_files;
use crate::tensor::{format_shape, DType, HostTensor, TensorInfo};

pub use affinity::{available_cores, pinned_threads, PIN_SLOTS};
pub use cuda_driver::{cuda_driver, Driver, Gpu};
pub use env_numbers::ensure_variables_readable;
pub use exit_trap::{report_to, Reports};
pub use log_watch::AlgoChoices;
pub use process::{
    effective_uid, end_with_this_process, ensure_thread_stacks, ignore_file_size_signal, inherit, process_cpu_time,
    restart, take_inherited_pipe, ProcessGroup,
};
pub use stdio::{
    capture_stdout, silence_stdout, stderr_read_by_parent, stdout_closed, stdout_closed_in_parent, take_stdout,
    StdoutSilenced,
};

/// The oldest runtime whose `LiteConfig` matches our declaration (1.11 appended fields).
const MIN_VERSION: (i32, i32) = (1, 11);

/// An error reported by the engine: its message, and the C++ backtrace it appends.
#[derive(Debug)]
pub struct EngineError {
    pub call: &'static str,
    pub message: String,
    pub backtrace: String,
}

impl EngineError {
    /// The first line of the engine's message, without the source location of a
    /// failed assertion: what a user reads without `-v`.
    pub fn summary(&self) -> &str {
        let line = self.message.lines().next().unwrap_or("").trim();
        match line.find(" failed at /").or_else(|| line.find(" failed at file")) {
            Some(end) => &line[..end + " failed".len()],
            None => line,
        }
    }

    /// What a failed assertion adds on its `extra message: ` line, without
    /// Lite's `, Error Code: N`.
    pub fn extra_message(&self) -> Option<&str> {
        let extra = self
            .message
            .lines()
            .find_map(|line| line.trim().strip_prefix("extra message: "))?;
        Some(
            extra
                .rsplit_once(", Error Code: ")
                .map_or(extra, |(message, _)| message),
        )
    }
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.extra_message() {
            Some(extra) => write!(f, "{}: {extra}", self.summary()),
            None => write!(f, "{}", self.summary()),
        }
    }
}

impl std::error::Error for EngineError {}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Device {
    #[default]
    Cpu,
    Cuda(u32),
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Device::Cpu => write!(f, "cpu"),
            Device::Cuda(id) => write!(f, "cuda:{id}"),
        }
    }
}

/// Memory layouts the engine can convert a graph to (`enable_nchw*` options).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GraphLayout {
    Nchw44,
    Nchw44Dot,
    Nchw88,
    Nhwcd4,
    Nchw4,
    Nchw32,
    Nchw64,
}

/// How each operator's algorithm is chosen, as load_and_run offers it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AlgoSearch {
    /// The heuristic, no profiling.
    #[default]
    Heuristic,
    /// Profile the optimized algorithms (`--fast-run`: PROFILE|OPTIMIZED).
    FastRun,
    /// Profile every algorithm (`--full-run`: PROFILE).
    FullRun,
    /// Only the fast-run cache, the heuristic where it has nothing; never profile (PROFILE|HEURISTIC).
    CacheOnly,
}

/// How a network is built and run: the options of load_and_run that Lite exposes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NetworkOptions {
    pub device: Device,
    pub threads: Option<usize>,
    pub cpu_inplace: bool,
    pub algo_search: AlgoSearch,
    /// Profile with this batch size.
    pub shared_batch_size: Option<u32>,
    pub binary_equal_between_batch: bool,
    pub reproducible: bool,
    pub workspace_limit: Option<usize>,
    pub layout_transform: bool,
    pub tensorrt: bool,
    pub weight_preprocess: bool,
    pub fuse_preprocess: bool,
    pub fake_first: bool,
    pub const_shape: bool,
    pub no_sanity_check: bool,
    pub record_comp_seq: Option<i32>,
    pub graph_opt_level: Option<i32>,
    pub async_level: Option<i32>,
    pub jit_level: Option<i32>,
    pub layout: Option<GraphLayout>,
    /// Attach the engine's graph profiler, which rewrites this JSON file at the end of every run.
    pub profile_json: Option<PathBuf>,
    /// Attach the engine's io dump, which writes every var each run produces.
    pub io_dump: Option<IoDump>,
    /// Load the graph with the names the engine cannot write into its JSON
    /// under placeholders (`model::EngineNames`): the profiler of this
    /// network, or of a copy that shares its graph, writes them.
    pub writable_names: bool,
    /// The decryption method of a bare encrypted model.
    pub bare_model_decryption: Option<&'static str>,
    /// Pin the engine's CPU worker threads to these cores: thread `n` of the
    /// network on `worker` W (of T threads) to the `W * T + n`th, round robin.
    pub cpu_cores: Option<Vec<usize>>,
    /// Run on an engine worker of its own, numbered from 1 (CPU: a comp
    /// node of its own, with its own threads; CUDA: a stream of its own),
    /// so that networks on different workers run at the same time. Without
    /// it a network runs on the device's first worker.
    pub worker: Option<u32>,
}

impl NetworkOptions {
    /// Does the engine profile algorithms (fast-run, full-run) during the
    /// first run? With `--record-comp-seq 2` it records, and so profiles,
    /// while loading (measured: conv_float's load takes 260 ms with fast-run
    /// there, 14 ms without, and its first run 0.1 ms either way).
    pub fn profiles_at_first_run(&self) -> bool {
        matches!(self.algo_search, AlgoSearch::FastRun | AlgoSearch::FullRun) && self.record_comp_seq != Some(2)
    }

    /// The same options for a copy of the network that runs beside it on
    /// `worker` (see `Lite::share_weights`), without the profiler and io dump.
    pub fn for_copy(&self, worker: Option<u32>) -> NetworkOptions {
        NetworkOptions {
            profile_json: None,
            io_dump: None,
            worker,
            ..self.clone()
        }
    }
}

/// Where the engine's io dump plugin writes.
#[derive(Clone, Debug, PartialEq)]
pub enum IoDump {
    /// A file per var into this folder, named by the var's id in hex (6 digits),
    /// in the format of MegEngine's `debug::dump_tensor`.
    Binary(PathBuf),
    /// Every var's producer, inputs and leading values as text into this file.
    Text(PathBuf),
}

/// A loaded Lite library. Cheap to clone; networks keep it alive.
#[derive(Clone)]
pub struct Lite {
    api: Arc<ffi::Api>,
    verbose: bool,
}

impl Lite {
    /// Loads the Lite shared library at `path` and checks its version.
    pub fn load(path: &Path, verbose: bool) -> Result<Lite> {
        env_numbers::ensure_variables_readable()?;
        // The CUDA probing at load time prints to both streams; keep it for -v only.
        let quiet = stdio::quiet_start(verbose);
        // Its initialisers run engine code already.
        exit_trap::engine_loaded();
        // SAFETY: loading a library runs its initialisers; the path is the Lite runtime
        // the user or the installer chose, which is what we are here to run.
        let library = unsafe { Library::new(path) }
            .with_context(|| format!("cannot load the MegEngine Lite library {}", path.display()))?;
        // SAFETY: the symbols are declared from the v1.13.0 headers; the version
        // check below rejects runtimes whose struct layouts differ.
        let api = unsafe { ffi::Api::load(library) }
            .with_context(|| format!("{} is not a MegEngine Lite library", path.display()))?;
        drop(quiet);
        let runtime = Lite {
            api: Arc::new(api),
            verbose,
        };
        let (major, minor, patch) = runtime.version()?;
        if (major, minor) < MIN_VERSION {
            bail!(
                "{} is MegEngine Lite {major}.{minor}.{patch}; mge needs {}.{} or newer (run `mge runtime install`)",
                path.display(),
                MIN_VERSION.0,
                MIN_VERSION.1
            );
        }
        let level = if verbose {
            ffi::LITE_LOG_INFO
        } else {
            ffi::LITE_LOG_ERROR
        };
        // SAFETY: plain call into the loaded library.
        runtime.check("LITE_set_log_level", unsafe { (runtime.api.set_log_level)(level) })?;
        Ok(runtime)
    }

    pub fn version(&self) -> Result<(i32, i32, i32)> {
        let (mut major, mut minor, mut patch) = (0, 0, 0);
        // SAFETY: three valid out-pointers.
        let code = unsafe { (self.api.get_version)(&mut major, &mut minor, &mut patch) };
        self.check("LITE_get_version", code)?;
        Ok((major, minor, patch))
    }

    pub fn cuda_device_count(&self) -> Result<usize> {
        self.device_count(ffi::LITE_CUDA)
    }

    pub fn cpu_device_count(&self) -> Result<usize> {
        self.device_count(ffi::LITE_CPU)
    }

    fn device_count(&self, device_type: c_int) -> Result<usize> {
        // Without a driver the CUDA probe prints a banner about CPU mode: -v only.
        let _quiet = stdio::quiet_start(self.verbose);
        let mut count = 0usize;
        // SAFETY: valid out-pointer.
        let code = unsafe { (self.api.get_device_count)(device_type, &mut count) };
        self.check("LITE_get_device_count", code)?;
        Ok(count)
    }

    /// Uses `path` as the fast-run algorithm cache (read now, written by
    /// `dump_algo_cache`), once its framing is checked: a new file is an empty cache.
    pub fn use_algo_cache(&self, path: &Path) -> Result<()> {
        if let Some(bytes) = input_files::read_if_present(path, &input_files::FAST_RUN_CACHE)? {
            fast_run_file::check_framing(&bytes).map_err(|reason| {
                anyhow::anyhow!(
                    "{} is not a fast-run cache the engine wrote ({reason}): delete it, or give --fast-run-cache another file",
                    path.display()
                )
            })?;
        }
        let path = c_path(path)?;
        // SAFETY: NUL-terminated string that outlives the call (the engine copies it).
        let code = unsafe { (self.api.set_persistent_cache)(path.as_ptr(), 0) };
        self.check("LITE_set_persistent_cache", code)
    }

    pub fn dump_algo_cache(&self, path: &Path) -> Result<()> {
        let path = c_path(path)?;
        // SAFETY: NUL-terminated string valid for the call.
        let code = unsafe { (self.api.dump_persistent_cache)(path.as_ptr()) };
        self.check("LITE_dump_persistent_cache", code)
    }

    /// Replaces the key of decryption method `method` for the whole process.
    /// The engine never checks a key's length: the caller does.
    pub fn set_decryption_key(&self, method: &str, key: &[u8]) -> Result<()> {
        let name = CString::new(method).with_context(|| format!("method {method:?} has a NUL byte"))?;
        // SAFETY: NUL-terminated name and a key buffer valid for the call (the
        // engine copies the key); a null function keeps the method's own.
        let code = unsafe { (self.api.update_decryption_or_key)(name.as_ptr(), ptr::null(), key.as_ptr(), key.len()) };
        self.check("LITE_update_decryption_or_key", code)
    }

    /// Loads an extern C operator library (`extern_c_opr.h`), whose loaders
    /// the models loaded afterwards may use.
    pub fn load_extern_operators(&self, library: &Path) -> Result<()> {
        let path = c_path(library)?;
        // SAFETY: NUL-terminated path valid for the call; loading the library
        // runs its initialiser, which the user asked for.
        let code = unsafe { (self.api.set_loader_lib_path)(path.as_ptr()) };
        self.check("LITE_set_loader_lib_path", code)
    }

    /// Uses `path` as TensorRT's engine cache (read now, written by `dump_tensorrt_cache`).
    pub fn use_tensorrt_cache(&self, path: &Path) -> Result<()> {
        let path = c_path(path)?;
        // SAFETY: NUL-terminated string valid for the call (the engine copies it).
        let code = unsafe { (self.api.set_tensor_rt_cache)(path.as_ptr()) };
        self.check("LITE_set_tensor_rt_cache", code)
    }

    /// Writes TensorRT's engine cache to the file `use_tensorrt_cache` named.
    pub fn dump_tensorrt_cache(&self) -> Result<()> {
        // SAFETY: plain call.
        let code = unsafe { (self.api.dump_tensor_rt_cache)() };
        self.check("LITE_dump_tensor_rt_cache", code)
    }

    /// Starts counting how the engine chooses operators' algorithms (see
    /// `AlgoChoices`); `None` when this runtime does not let us.
    pub fn watch_algorithm_choices(&self) -> Option<()> {
        log_watch::start(self.api.engine_log.as_ref()?, self.verbose)
    }

    /// The algorithm choices counted since `watch_algorithm_choices`.
    pub fn algorithm_choices(&self) -> AlgoChoices {
        log_watch::choices()
    }

    /// Fails when `device` is not there to run on.
    pub fn check_device(&self, device: Device) -> Result<()> {
        if let Device::Cuda(id) = device {
            let count = self.cuda_device_count()?;
            if count == 0 {
                bail!("--device {device}: no CUDA device is visible to MegEngine (use --device cpu)");
            }
            if id as usize >= count {
                bail!("--device {device}: only {count} CUDA device(s), numbered from 0");
            }
        }
        Ok(())
    }

    /// Builds a network for `options` and loads `model` (one graph) into it.
    pub fn load_network(&self, model: Vec<u8>, options: &NetworkOptions) -> Result<Network> {
        let mut network = self.make_network(Arc::new(model), options)?;
        let model = Arc::get_mut(&mut network.model).expect("no copy shares a network being loaded");
        let (data, size) = (model.as_mut_ptr() as *mut c_void, model.len());
        // SAFETY: the model bytes live in `network.model` for as long as the network
        // (and its copies), as Lite requires for memory it does not own.
        let code = unsafe { (self.api.load_model_from_mem)(network.handle, data, size) };
        self.check("LITE_load_model_from_mem", code)?;
        network.loaded(options)?;
        Ok(network)
    }

    /// A copy of `source` built for `options`, loaded with `source`'s weights
    /// (which it shares, instead of reading its own). With `share_memory` it
    /// plans its runtime memory in `source`'s: the two must then never run
    /// at the same time.
    pub fn share_weights(&self, source: &Network, options: &NetworkOptions, share_memory: bool) -> Result<Network> {
        let mut network = self.make_network(Arc::clone(&source.model), options)?;
        if share_memory {
            // SAFETY: two live handles; the copy is not loaded yet, as Lite requires.
            let code = unsafe { (self.api.share_runtime_memory)(network.handle, source.handle) };
            self.check("LITE_share_runtime_memroy", code)?;
        }
        // SAFETY: two live handles, `source` loaded; the weights it shares stay
        // alive with the model bytes both hold.
        let code = unsafe { (self.api.shared_weight_with_network)(network.handle, source.handle) };
        self.check("LITE_shared_weight_with_network", code)?;
        network.loaded(options)?;
        Ok(network)
    }

    /// A network for `options`, configured but not loaded.
    fn make_network(&self, model: Arc<Vec<u8>>, options: &NetworkOptions) -> Result<Network> {
        let mut config = self.config(options.device, options)?;
        let decryption = options.bare_model_decryption.map(CString::new).transpose()?;
        if let Some(name) = &decryption {
            config.bare_model_cryption_name = name.as_ptr();
        }
        let mut handle: ffi::LiteNetwork = ptr::null_mut();
        // SAFETY: valid out-pointer; `config` is a complete copy of the runtime's default,
        // its strings alive for the call (the engine copies them).
        let code = unsafe { (self.api.make_network_config)(&mut handle, config) };
        self.check("LITE_make_network_config", code)?;
        let mut network = Network {
            runtime: self.clone(),
            handle,
            model,
            fake_first: options.fake_first,
            profiler_started: None,
            pin: None,
        };
        network.configure(options)?;
        Ok(network)
    }

    fn config(&self, device: Device, options: &NetworkOptions) -> Result<ffi::LiteConfig> {
        // SAFETY: `default_config` returns a pointer to a static struct of the runtime.
        let default = unsafe { (self.api.default_config)() };
        if default.is_null() {
            bail!("the runtime returned no default network config");
        }
        // SAFETY: non-null, points at a `LiteConfig` of this layout (version checked).
        let mut config = unsafe { *default };
        match device {
            Device::Cpu => {
                config.device_type = ffi::LITE_CPU;
                if let Some(worker) = options.worker {
                    // Each CPU device number is a comp node with threads of its own.
                    config.device_id = worker as c_int;
                }
            }
            Device::Cuda(id) => {
                config.device_type = ffi::LITE_CUDA;
                config.device_id = id as c_int;
            }
        }
        let o = &mut config.options;
        let flag = |on: bool, current: c_int| if on { 1 } else { current };
        o.weight_preprocess = flag(options.weight_preprocess, o.weight_preprocess);
        o.fuse_preprocess = flag(options.fuse_preprocess, o.fuse_preprocess);
        o.fake_next_exec = flag(options.fake_first, o.fake_next_exec);
        o.const_shape = flag(options.const_shape, o.const_shape);
        if options.no_sanity_check {
            o.var_sanity_check_first_run = 0;
        }
        let level = |value: Option<i32>, current: c_int| value.unwrap_or(current);
        o.comp_node_seq_record_level = level(options.record_comp_seq, o.comp_node_seq_record_level);
        o.graph_opt_level = level(options.graph_opt_level, o.graph_opt_level);
        o.async_exec_level = level(options.async_level, o.async_exec_level);
        o.jit_level = level(options.jit_level, o.jit_level);
        if let Some(layout) = options.layout {
            *match layout {
                GraphLayout::Nchw44 => &mut o.enable_nchw44,
                GraphLayout::Nchw44Dot => &mut o.enable_nchw44_dot,
                GraphLayout::Nchw88 => &mut o.enable_nchw88,
                GraphLayout::Nhwcd4 => &mut o.enable_nhwcd4,
                GraphLayout::Nchw4 => &mut o.enable_nchw4,
                GraphLayout::Nchw32 => &mut o.enable_nchw32,
                GraphLayout::Nchw64 => &mut o.enable_nchw64,
            } = 1;
        }
        Ok(config)
    }

    /// Turns a non-zero return code into the engine's last error.
    fn check(&self, call: &'static str, code: c_int) -> Result<()> {
        if code == 0 {
            return Ok(());
        }
        // SAFETY: the engine returns a NUL-terminated string it owns (or null).
        let raw = unsafe { (self.api.get_last_error)() };
        let text = if raw.is_null() {
            String::new()
        } else {
            // SAFETY: non-null, NUL-terminated, valid until the next Lite call.
            unsafe { CStr::from_ptr(raw) }.to_string_lossy().into_owned()
        };
        // SAFETY: plain call; resets the message we just copied.
        unsafe { (self.api.clear_last_error)() };
        let (message, backtrace) = match text.split_once("\n\nbacktrace:") {
            Some((message, backtrace)) => (message, backtrace.trim()),
            None => (text.as_str(), ""),
        };
        let message = if message.trim().is_empty() {
            format!("{call} failed")
        } else {
            message.trim().to_string()
        };
        Err(EngineError {
            call,
            message,
            backtrace: backtrace.to_string(),
        }
        .into())
    }
}

/// A network with a model loaded. Destroyed with the value.
pub struct Network {
    runtime: Lite,
    handle: ffi::LiteNetwork,
    // Lite reads the model from this buffer without copying it; copies share it.
    model: Arc<Vec<u8>>,
    fake_first: bool,
    profiler_started: Option<Instant>,
    /// Pins the worker threads at the first run, on the thread that runs it
    /// (with `cpu_inplace` that thread is the worker).
    pin: Option<ffi::LiteThreadAffinityCallback>,
}

// SAFETY: a Lite network is not tied to the thread that made it; `&mut self`
// on every call that runs it keeps one thread at a time on it.
unsafe impl Send for Network {}

impl Network {
    fn configure(&mut self, options: &NetworkOptions) -> Result<()> {
        let api = &self.runtime.api;
        let handle = self.handle;
        // SAFETY (every call below): `handle` is a live network not yet loaded, which
        // is when Lite accepts these settings.
        if let (Device::Cuda(_), Some(worker)) = (options.device, options.worker) {
            let code = unsafe { (api.set_stream_id)(handle, worker as c_int) };
            self.runtime.check("LITE_set_stream_id", code)?;
        }
        if options.cpu_inplace {
            self.runtime.check("LITE_set_cpu_inplace_mode", unsafe {
                (api.set_cpu_inplace_mode)(handle)
            })?;
        }
        if let Some(threads) = options.threads {
            let code = unsafe { (api.set_cpu_threads_number)(handle, threads) };
            self.runtime.check("LITE_set_cpu_threads_number", code)?;
        }
        if options.tensorrt {
            self.runtime
                .check("LITE_use_tensorrt", unsafe { (api.use_tensorrt)(handle) })?;
        }
        // As load_and_run: binary equality between batches needs reproducible algorithms.
        let reproducible = options.reproducible || options.binary_equal_between_batch;
        if options.algo_search != AlgoSearch::Heuristic || reproducible {
            let mut policy = match options.algo_search {
                AlgoSearch::Heuristic => ffi::LITE_ALGO_HEURISTIC,
                AlgoSearch::FastRun => ffi::LITE_ALGO_PROFILE | ffi::LITE_ALGO_OPTIMIZED,
                AlgoSearch::FullRun => ffi::LITE_ALGO_PROFILE,
                AlgoSearch::CacheOnly => ffi::LITE_ALGO_PROFILE | ffi::LITE_ALGO_HEURISTIC,
            };
            if reproducible {
                policy |= ffi::LITE_ALGO_REPRODUCIBLE;
            }
            let code = unsafe { (api.set_network_algo_policy)(handle, policy) };
            self.runtime.check("LITE_set_network_algo_policy", code)?;
        }
        // After the policy, which resets both.
        if options.shared_batch_size.is_some() || options.binary_equal_between_batch {
            let batch = options.shared_batch_size.unwrap_or(0);
            let equal = c_int::from(options.binary_equal_between_batch);
            let code = unsafe { (api.set_network_algo_fastrun_config)(handle, batch, equal) };
            self.runtime.check("LITE_set_network_algo_fastrun_config", code)?;
        }
        if options.layout_transform {
            let code = unsafe { (api.enable_global_layout_transform)(handle) };
            self.runtime.check("LITE_enable_global_layout_transform", code)?;
        }
        if let Some(path) = &options.profile_json {
            let path = c_path(path)?;
            // The engine copies the path.
            let code = unsafe { (api.enable_profile_performance)(handle, path.as_ptr()) };
            self.profiler_started = Some(Instant::now());
            self.runtime.check("LITE_enable_profile_performance", code)?;
        }
        match &options.io_dump {
            None => {}
            Some(IoDump::Binary(folder)) => {
                let folder = c_path(folder)?;
                let code = unsafe { (api.enable_io_bin_dump)(handle, folder.as_ptr()) };
                self.runtime.check("LITE_enable_io_bin_dump", code)?;
            }
            Some(IoDump::Text(file)) => {
                let file = c_path(file)?;
                let code = unsafe { (api.enable_io_txt_dump)(handle, file.as_ptr()) };
                self.runtime.check("LITE_enable_io_txt_dump", code)?;
            }
        }
        Ok(())
    }

    /// What follows loading: the workspace limit, and the pinning plan.
    fn loaded(&mut self, options: &NetworkOptions) -> Result<()> {
        if let Some(limit) = options.workspace_limit {
            // SAFETY: live, loaded network handle.
            let code = unsafe { (self.runtime.api.set_network_algo_workspace_limit)(self.handle, limit) };
            self.runtime.check("LITE_set_network_algo_workspace_limit", code)?;
        }
        if let Some(cores) = options.cpu_cores.as_ref().filter(|cores| !cores.is_empty()) {
            let threads = options.threads.unwrap_or(1).max(1);
            let worker = options.worker.unwrap_or(0) as usize;
            let plan = (0..threads).map(|thread| cores[(worker * threads + thread) % cores.len()]);
            self.pin = Some(affinity::plan(worker, plan.collect())?);
        }
        Ok(())
    }

    /// Writes the model as the global layout transform left it (the network
    /// must have been built with `layout_transform`) to `path`.
    pub fn dump_layout_transform_model(&self, path: &Path) -> Result<()> {
        let path = c_path(path)?;
        // SAFETY: live handle with a loaded model; NUL-terminated path valid for the call.
        let code = unsafe { (self.runtime.api.dump_layout_transform_model)(self.handle, path.as_ptr()) };
        self.runtime.check("LITE_dump_layout_transform_model", code)
    }

    /// Taken right after the engine's profiler started its clock: the profiler's
    /// host times are seconds since then, so adding them to this instant never
    /// places an event earlier than it happened.
    pub fn profiler_started(&self) -> Option<Instant> {
        self.profiler_started
    }

    pub fn inputs(&self) -> Result<Vec<TensorInfo>> {
        self.io_infos(ffi::LITE_INPUT)
    }

    pub fn outputs(&self) -> Result<Vec<TensorInfo>> {
        self.io_infos(ffi::LITE_OUTPUT)
    }

    fn io_infos(&self, phase: c_int) -> Result<Vec<TensorInfo>> {
        self.io_names(phase)?
            .into_iter()
            .map(|name| {
                let layout = self.layout(self.tensor(&name, phase)?)?;
                let (shape, dtype) = from_layout(&layout).with_context(|| format!("tensor '{name}'"))?;
                Ok(TensorInfo { name, shape, dtype })
            })
            .collect()
    }

    fn io_names(&self, phase: c_int) -> Result<Vec<String>> {
        let api = &self.runtime.api;
        let (list, call): (unsafe extern "C" fn(_, _, _) -> _, _) = if phase == ffi::LITE_INPUT {
            (api.get_all_input_name, "LITE_get_all_input_name")
        } else {
            (api.get_all_output_name, "LITE_get_all_output_name")
        };
        let mut count = 0usize;
        // SAFETY: live handle; a null name array asks for the count only.
        self.runtime
            .check(call, unsafe { list(self.handle, &mut count, ptr::null_mut()) })?;
        let mut names: Vec<*const c_char> = vec![ptr::null(); count];
        // SAFETY: `names` has room for `count` pointers.
        self.runtime
            .check(call, unsafe { list(self.handle, ptr::null_mut(), names.as_mut_ptr()) })?;
        Ok(names
            .into_iter()
            // SAFETY: the engine fills NUL-terminated names owned by the network.
            .map(|name| unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned())
            .collect())
    }

    fn tensor(&self, name: &str, phase: c_int) -> Result<ffi::LiteTensor> {
        let c_name = CString::new(name).with_context(|| format!("tensor name {name:?} has a NUL byte"))?;
        let mut tensor: ffi::LiteTensor = ptr::null_mut();
        // SAFETY: live handle, NUL-terminated name, valid out-pointer. The tensor
        // belongs to the network and is never destroyed by us.
        let code = unsafe { (self.runtime.api.get_io_tensor)(self.handle, c_name.as_ptr(), phase, &mut tensor) };
        self.runtime.check("LITE_get_io_tensor", code)?;
        if tensor.is_null() {
            bail!("the model has no tensor named '{name}'");
        }
        Ok(tensor)
    }

    fn layout(&self, tensor: ffi::LiteTensor) -> Result<ffi::LiteLayout> {
        let mut layout = ffi::LiteLayout {
            shapes: [0; ffi::LAYOUT_MAX_DIM],
            ndim: 0,
            data_type: 0,
        };
        // SAFETY: tensor handle from `tensor()`, valid out-pointer.
        let code = unsafe { (self.runtime.api.get_tensor_layout)(tensor, &mut layout) };
        self.runtime.check("LITE_get_tensor_layout", code)?;
        Ok(layout)
    }

    /// Copies `value` into input `name`, changing the input's shape when it differs.
    pub fn set_input(&mut self, name: &str, value: &HostTensor) -> Result<()> {
        let tensor = self.tensor(name, ffi::LITE_INPUT)?;
        let current = self.layout(tensor)?;
        let wanted = to_layout(&value.shape, value.dtype)?;
        if current.ndim != wanted.ndim
            || current.shapes[..current.ndim] != wanted.shapes[..wanted.ndim]
            || current.data_type != wanted.data_type
        {
            // SAFETY: tensor handle from `tensor()`; the layout is complete.
            let code = unsafe { (self.runtime.api.set_tensor_layout)(tensor, wanted) };
            self.runtime.check("LITE_set_tensor_layout", code)?;
        }
        let memory = self.memory(tensor, value.data.len())?;
        // SAFETY: `memory` holds at least `value.data.len()` bytes (checked by `memory`)
        // and cannot overlap our own buffer.
        unsafe { ptr::copy_nonoverlapping(value.data.as_ptr(), memory as *mut u8, value.data.len()) };
        Ok(())
    }

    /// The tensor's memory, checked to hold `expected` bytes.
    fn memory(&self, tensor: ffi::LiteTensor, expected: usize) -> Result<*mut c_void> {
        if expected == 0 {
            // An empty tensor (a filter or NMS that kept nothing) may have no memory at all;
            // no byte is read or written, and a copy still needs a pointer that is not null.
            return Ok(ptr::NonNull::<c_void>::dangling().as_ptr());
        }
        let api = &self.runtime.api;
        let mut size = 0usize;
        // SAFETY: tensor handle from `tensor()`, valid out-pointer.
        self.runtime.check("LITE_get_tensor_total_size_in_byte", unsafe {
            (api.get_tensor_total_size_in_byte)(tensor, &mut size)
        })?;
        let mut memory: *mut c_void = ptr::null_mut();
        // SAFETY: as above.
        self.runtime.check("LITE_get_tensor_memory", unsafe {
            (api.get_tensor_memory)(tensor, &mut memory)
        })?;
        if memory.is_null() || size < expected {
            bail!("the engine gave a tensor of {size} bytes where {expected} were needed");
        }
        Ok(memory)
    }

    /// Runs the graph once and waits for it to finish.
    pub fn forward(&mut self) -> Result<()> {
        let api = &self.runtime.api;
        if let Some(pin) = self.pin.take() {
            // SAFETY: live, loaded handle; the callback is a plain function that lives forever.
            let code = unsafe { (api.set_runtime_thread_affinity)(self.handle, pin) };
            self.runtime.check("LITE_set_runtime_thread_affinity", code)?;
        }
        // SAFETY: live handle with a loaded model.
        self.runtime
            .check("LITE_forward", unsafe { (api.forward)(self.handle) })?;
        // SAFETY: as above.
        self.runtime.check("LITE_wait", unsafe { (api.wait)(self.handle) })
    }

    /// With `fake_first`, the first execution only allocates; callers run it untimed.
    pub fn wants_fake_run(&self) -> bool {
        self.fake_first
    }

    /// Copies output `name` out of the engine.
    pub fn output(&self, name: &str) -> Result<HostTensor> {
        let tensor = self.tensor(name, ffi::LITE_OUTPUT)?;
        let layout = self.layout(tensor)?;
        let (shape, dtype) = from_layout(&layout).with_context(|| format!("output '{name}'"))?;
        let bytes = shape.iter().product::<usize>() * dtype.size();
        let memory = self.memory(tensor, bytes)?;
        // SAFETY: `memory` holds at least `bytes` bytes (checked), contiguous for a
        // network output, and stays valid until the next forward.
        let data = unsafe { std::slice::from_raw_parts(memory as *const u8, bytes) }.to_vec();
        Ok(HostTensor { shape, dtype, data })
    }
}

impl Drop for Network {
    fn drop(&mut self) {
        // SAFETY: the handle is live and dropped exactly once; failure here has no remedy.
        unsafe { (self.runtime.api.destroy_network)(self.handle) };
    }
}

fn c_path(path: &Path) -> Result<CString> {
    CString::new(path.as_os_str().as_encoded_bytes()).with_context(|| format!("path {} has a NUL byte", path.display()))
}

fn dtype_from_lite(code: c_int) -> Option<DType> {
    Some(match code {
        0 => DType::F32,
        1 => DType::F16,
        2 => DType::I32,
        3 => DType::I16,
        4 => DType::I8,
        5 => DType::U8,
        6 => DType::U32,
        7 => DType::U16,
        8 => DType::I64,
        _ => return None,
    })
}

fn dtype_to_lite(dtype: DType) -> c_int {
    match dtype {
        DType::F32 => 0,
        DType::F16 => 1,
        DType::I32 => 2,
        DType::I16 => 3,
        DType::I8 => 4,
        DType::U8 => 5,
        DType::U32 => 6,
        DType::U16 => 7,
        DType::I64 => 8,
    }
}

fn from_layout(layout: &ffi::LiteLayout) -> Result<(Vec<usize>, DType)> {
    let dtype =
        dtype_from_lite(layout.data_type).with_context(|| format!("unknown Lite data type {}", layout.data_type))?;
    let ndim = layout.ndim.min(ffi::LAYOUT_MAX_DIM);
    Ok((layout.shapes[..ndim].to_vec(), dtype))
}

fn to_layout(shape: &[usize], dtype: DType) -> Result<ffi::LiteLayout> {
    if shape.len() > ffi::LAYOUT_MAX_DIM {
        bail!(
            "shape {} has more than {} dimensions",
            format_shape(shape),
            ffi::LAYOUT_MAX_DIM
        );
    }
    let mut layout = ffi::LiteLayout {
        shapes: [0; ffi::LAYOUT_MAX_DIM],
        ndim: shape.len(),
        data_type: dtype_to_lite(dtype),
    };
    layout.shapes[..shape.len()].copy_from_slice(shape);
    Ok(layout)
}
