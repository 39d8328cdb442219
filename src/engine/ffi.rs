//! Raw declarations of the MegEngine Lite 1.13 C API (`lite-c/*.h` at tag v1.13.0),
//! limited to what `mge` calls. Layouts must match the headers exactly: `LiteConfig`
//! is passed by value, so a missing field shifts everything after it.

use std::os::raw::{c_char, c_int, c_uint, c_void};

use anyhow::{Context, Result};
use libloading::Library;

pub type LiteNetwork = *mut c_void;
pub type LiteTensor = *mut c_void;
/// `LiteThreadAffinityCallback`: called on each of a network's CPU worker
/// threads with its number (0 to threads - 1; the last is the main worker).
pub type LiteThreadAffinityCallback = extern "C" fn(c_int) -> c_int;

/// `LAYOUT_MAX_DIM` in `tensor_c.h`.
pub const LAYOUT_MAX_DIM: usize = 7;

// `LiteDeviceType`
pub const LITE_CPU: c_int = 0;
pub const LITE_CUDA: c_int = 1;

// `LiteTensorPhase`
pub const LITE_INPUT: c_int = 1;
pub const LITE_OUTPUT: c_int = 2;

// `LiteLogLevel`, and mgb's `LogLevel`: the same numbers.
pub const LITE_LOG_DEBUG: c_int = 0;
pub const LITE_LOG_INFO: c_int = 1;
pub const LITE_LOG_ERROR: c_int = 3;

// `LiteAlgoSelectStrategy` bits
pub const LITE_ALGO_HEURISTIC: c_int = 1;
pub const LITE_ALGO_PROFILE: c_int = 1 << 1;
pub const LITE_ALGO_REPRODUCIBLE: c_int = 1 << 2;
pub const LITE_ALGO_OPTIMIZED: c_int = 1 << 3;

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LiteLayout {
    pub shapes: [usize; LAYOUT_MAX_DIM],
    pub ndim: usize,
    pub data_type: c_int,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LiteOptions {
    pub weight_preprocess: c_int,
    pub fuse_preprocess: c_int,
    pub fake_next_exec: c_int,
    pub var_sanity_check_first_run: c_int,
    pub const_shape: c_int,
    pub force_dynamic_alloc: c_int,
    pub force_output_dynamic_alloc: c_int,
    pub force_output_use_user_specified_memory: c_int,
    pub no_profiling_on_shape_change: c_int,
    pub jit_level: c_int,
    pub comp_node_seq_record_level: c_int,
    pub graph_opt_level: c_int,
    pub async_exec_level: c_int,
    pub enable_nchw44: c_int,
    pub enable_nchw44_dot: c_int,
    pub enable_nchw88: c_int,
    pub enable_nhwcd4: c_int,
    pub enable_nchw4: c_int,
    pub enable_nchw32: c_int,
    pub enable_nchw64: c_int,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LiteConfig {
    pub has_compression: c_int,
    pub device_id: c_int,
    pub device_type: c_int,
    pub backend: c_int,
    pub bare_model_cryption_name: *const c_char,
    pub options: LiteOptions,
    // Appended in 1.11: older runtimes read a shorter struct.
    pub auto_optimize_inference: c_int,
    pub discrete_input_name: *const c_char,
}

/// Declares the function table once: each entry is looked up by its C name.
macro_rules! lite_api {
    ($($field:ident = $symbol:literal : fn($($arg:ty),*) $(-> $ret:ty)?;)*) => {
        pub struct Api {
            $(pub $field: unsafe extern "C" fn($($arg),*) $(-> $ret)?,)*
            /// The engine's own log, where the runtime lets us reach it.
            pub engine_log: Option<EngineLog>,
        }

        impl Api {
            /// # Safety
            /// `library` must be a MegEngine Lite build whose exports have the signatures above.
            pub unsafe fn load(library: Library) -> Result<Api> {
                let api = Api {
                    $($field: *library
                        .get::<unsafe extern "C" fn($($arg),*) $(-> $ret)?>(concat!($symbol, "\0").as_bytes())
                        .with_context(|| format!("the library does not export `{}`", $symbol))?,)*
                    engine_log: EngineLog::load(&library),
                };
                // The engine keeps process-wide state (worker threads, caches, static
                // destructors run at exit): unloading it crashes, so it stays loaded.
                std::mem::forget(library);
                Ok(api)
            }
        }
    };
}

/// `mgb::LogHandler`: level, file, function, line, format and its `va_list`
/// (a pointer on x86-64, the only platform the runtime exists for).
pub type LogHandler = unsafe extern "C" fn(c_int, *const c_char, *const c_char, c_int, *const c_char, *mut c_void);

/// MegEngine's log (`megbrain/common.h`): C++ functions of the engine library
/// Lite links, found through Lite's handle; the Lite C API has no log hook.
pub struct EngineLog {
    /// `mgb::set_log_handler`: returns the handler it replaces.
    pub set_handler: unsafe extern "C" fn(LogHandler) -> LogHandler,
    /// `mgb::set_log_level`: returns the level it replaces.
    pub set_level: unsafe extern "C" fn(c_int) -> c_int,
}

impl EngineLog {
    /// # Safety
    /// `library` must be MegEngine Lite, linked to the engine whose symbols these are.
    unsafe fn load(library: &Library) -> Option<EngineLog> {
        Some(EngineLog {
            set_handler: *library
                .get(b"_ZN3mgb15set_log_handlerEPFvNS_8LogLevelEPKcS2_iS2_P13__va_list_tagE\0")
                .ok()?,
            set_level: *library.get(b"_ZN3mgb13set_log_levelENS_8LogLevelE\0").ok()?,
        })
    }
}

lite_api! {
    get_version = "LITE_get_version": fn(*mut c_int, *mut c_int, *mut c_int) -> c_int;
    get_last_error = "LITE_get_last_error": fn() -> *const c_char;
    clear_last_error = "LITE_clear_last_error": fn();
    get_device_count = "LITE_get_device_count": fn(c_int, *mut usize) -> c_int;
    set_log_level = "LITE_set_log_level": fn(c_int) -> c_int;
    set_persistent_cache = "LITE_set_persistent_cache": fn(*const c_char, c_int) -> c_int;
    dump_persistent_cache = "LITE_dump_persistent_cache": fn(*const c_char) -> c_int;
    default_config = "default_config": fn() -> *mut LiteConfig;
    make_network_config = "LITE_make_network_config": fn(*mut LiteNetwork, LiteConfig) -> c_int;
    destroy_network = "LITE_destroy_network": fn(LiteNetwork) -> c_int;
    load_model_from_mem = "LITE_load_model_from_mem": fn(LiteNetwork, *mut c_void, usize) -> c_int;
    set_cpu_inplace_mode = "LITE_set_cpu_inplace_mode": fn(LiteNetwork) -> c_int;
    set_cpu_threads_number = "LITE_set_cpu_threads_number": fn(LiteNetwork, usize) -> c_int;
    use_tensorrt = "LITE_use_tensorrt": fn(LiteNetwork) -> c_int;
    set_network_algo_policy = "LITE_set_network_algo_policy": fn(LiteNetwork, c_int) -> c_int;
    set_network_algo_workspace_limit = "LITE_set_network_algo_workspace_limit": fn(LiteNetwork, usize) -> c_int;
    enable_global_layout_transform = "LITE_enable_global_layout_transform": fn(LiteNetwork) -> c_int;
    enable_profile_performance = "LITE_enable_profile_performance": fn(LiteNetwork, *const c_char) -> c_int;
    enable_io_txt_dump = "LITE_enable_io_txt_dump": fn(LiteNetwork, *const c_char) -> c_int;
    enable_io_bin_dump = "LITE_enable_io_bin_dump": fn(LiteNetwork, *const c_char) -> c_int;
    dump_layout_transform_model = "LITE_dump_layout_transform_model": fn(LiteNetwork, *const c_char) -> c_int;
    forward = "LITE_forward": fn(LiteNetwork) -> c_int;
    wait = "LITE_wait": fn(LiteNetwork) -> c_int;
    get_all_input_name = "LITE_get_all_input_name": fn(LiteNetwork, *mut usize, *mut *const c_char) -> c_int;
    get_all_output_name = "LITE_get_all_output_name": fn(LiteNetwork, *mut usize, *mut *const c_char) -> c_int;
    get_io_tensor = "LITE_get_io_tensor": fn(LiteNetwork, *const c_char, c_int, *mut LiteTensor) -> c_int;
    get_tensor_layout = "LITE_get_tensor_layout": fn(LiteTensor, *mut LiteLayout) -> c_int;
    set_tensor_layout = "LITE_set_tensor_layout": fn(LiteTensor, LiteLayout) -> c_int;
    get_tensor_memory = "LITE_get_tensor_memory": fn(LiteTensor, *mut *mut c_void) -> c_int;
    get_tensor_total_size_in_byte = "LITE_get_tensor_total_size_in_byte": fn(LiteTensor, *mut usize) -> c_int;
    // Deployment artifacts: encrypted models, fast-run's settings, extern operators, TensorRT's cache.
    update_decryption_or_key = "LITE_update_decryption_or_key": fn(*const c_char, *const c_void, *const u8, usize) -> c_int;
    set_network_algo_fastrun_config = "LITE_set_network_algo_fastrun_config": fn(LiteNetwork, c_uint, c_int) -> c_int;
    set_loader_lib_path = "LITE_set_loader_lib_path": fn(*const c_char) -> c_int;
    set_tensor_rt_cache = "LITE_set_tensor_rt_cache": fn(*const c_char) -> c_int;
    dump_tensor_rt_cache = "LITE_dump_tensor_rt_cache": fn() -> c_int;
    // Copies of a network and where their threads run (timing phases, instances, pinning).
    // (dst, src): dst, not yet loaded, is loaded with src's weights.
    shared_weight_with_network = "LITE_shared_weight_with_network": fn(LiteNetwork, LiteNetwork) -> c_int;
    // (dst, src), whatever the header's parameter names say: dst, not yet loaded, plans its memory in src's.
    share_runtime_memory = "LITE_share_runtime_memroy": fn(LiteNetwork, LiteNetwork) -> c_int;
    set_stream_id = "LITE_set_stream_id": fn(LiteNetwork, c_int) -> c_int;
    set_runtime_thread_affinity = "LITE_set_runtime_thread_affinity": fn(LiteNetwork, LiteThreadAffinityCallback) -> c_int;
}
