//! The GPUs the CUDA driver reports, read through its own library
//! (`libcuda.so.1`, installed with the NVIDIA driver) loaded at run time: no
//! CUDA is needed to build `mge`, and none to run it on the CPU. Asked before
//! the engine loads, so that a GPU the runtime has no kernels for is refused
//! in a line instead of after a gigabyte of library. `cuInit` is the cost, and
//! the engine, loaded later in the same process, finds the driver initialised.

use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_uint};
use std::sync::OnceLock;

use libloading::Library;

/// The driver's library, by the name the CUDA runtime itself asks the loader for.
const DRIVER_LIBRARY: &str = "libcuda.so.1";

/// `CUresult`'s success and "no CUDA-capable device".
const CUDA_SUCCESS: c_int = 0;
const CUDA_ERROR_NO_DEVICE: c_int = 100;

/// `CUdevice_attribute`: the compute capability's major and minor numbers.
const ATTRIBUTE_CAPABILITY_MAJOR: c_int = 75;
const ATTRIBUTE_CAPABILITY_MINOR: c_int = 76;

/// One GPU as the driver reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gpu {
    /// The driver's ordinal, which the engine's `cuda:ID` also counts by
    /// (both honour `CUDA_VISIBLE_DEVICES`).
    pub index: u32,
    pub name: String,
    /// The compute capability (major, minor), e.g. (9, 0) for sm_90.
    pub capability: (u32, u32),
    pub memory_bytes: u64,
}

/// What the driver says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Driver {
    /// No NVIDIA driver: `libcuda.so.1` cannot be loaded (the loader's reason).
    Absent(String),
    /// The driver is there but `call` failed with `code` (and its name, where the driver gives one).
    Failed {
        call: &'static str,
        code: i32,
        name: Option<String>,
    },
    /// The driver answered: its CUDA version (e.g. 12020 for 12.2) and the GPUs it sees, maybe none.
    Ready { version: i32, gpus: Vec<Gpu> },
}

/// The driver's answer, asked once per process.
pub fn cuda_driver() -> &'static Driver {
    static DRIVER: OnceLock<Driver> = OnceLock::new();
    DRIVER.get_or_init(probe)
}

type Init = unsafe extern "C" fn(c_uint) -> c_int;
type DriverGetVersion = unsafe extern "C" fn(*mut c_int) -> c_int;
type DeviceGetCount = unsafe extern "C" fn(*mut c_int) -> c_int;
type DeviceGet = unsafe extern "C" fn(*mut c_int, c_int) -> c_int;
type DeviceGetName = unsafe extern "C" fn(*mut c_char, c_int, c_int) -> c_int;
type DeviceGetAttribute = unsafe extern "C" fn(*mut c_int, c_int, c_int) -> c_int;
type DeviceTotalMem = unsafe extern "C" fn(*mut usize, c_int) -> c_int;
type GetErrorName = unsafe extern "C" fn(c_int, *mut *const c_char) -> c_int;

fn probe() -> Driver {
    // SAFETY: the NVIDIA driver's library, found as the engine would find it;
    // its initialisers are the driver's own.
    let library = match unsafe { Library::new(DRIVER_LIBRARY) } {
        Ok(library) => library,
        Err(err) => return Driver::Absent(err.to_string()),
    };
    // SAFETY: the functions are declared as in the driver API's `cuda.h`, where
    // `CUdevice` is an int and `CUresult` an enum the size of an int.
    let driver = unsafe { query(&library) };
    // Kept loaded: the driver is initialised now, and the engine uses it later.
    std::mem::forget(library);
    driver
}

/// The driver's function `$name`, or the query ends: the driver lacks it.
macro_rules! function {
    ($library:expr, $name:literal, $type:ty) => {
        match $library.get::<$type>(concat!($name, "\0").as_bytes()) {
            Ok(function) => function,
            Err(_) => {
                return Driver::Failed {
                    call: $name,
                    code: -1,
                    name: Some("missing from libcuda.so.1".into()),
                }
            }
        }
    };
}

/// A call that fails ends the query with its name and code (`$failed`).
macro_rules! succeed {
    ($failed:expr, $name:literal, $call:expr) => {
        let code = $call;
        if code != CUDA_SUCCESS {
            return $failed($name, code);
        }
    };
}

/// # Safety
/// `library` must be the CUDA driver's library.
unsafe fn query(library: &Library) -> Driver {
    let error_name = library.get::<GetErrorName>(b"cuGetErrorName\0").ok();
    let failed = |call: &'static str, code: c_int| Driver::Failed {
        call,
        code,
        name: error_name.as_ref().and_then(|get| {
            let mut name = std::ptr::null();
            (get(code, &mut name) == CUDA_SUCCESS && !name.is_null())
                .then(|| CStr::from_ptr(name).to_string_lossy().into_owned())
        }),
    };
    // The one call that needs no cuInit.
    let mut version = 0;
    succeed!(
        failed,
        "cuDriverGetVersion",
        function!(library, "cuDriverGetVersion", DriverGetVersion)(&mut version)
    );
    match function!(library, "cuInit", Init)(0) {
        CUDA_SUCCESS => {}
        // The driver without a GPU (or with none visible) says so at init.
        CUDA_ERROR_NO_DEVICE => {
            return Driver::Ready {
                version,
                gpus: Vec::new(),
            }
        }
        code => return failed("cuInit", code),
    }
    let mut count = 0;
    succeed!(
        failed,
        "cuDeviceGetCount",
        function!(library, "cuDeviceGetCount", DeviceGetCount)(&mut count)
    );
    let (get, get_name, get_attribute, total_memory) = (
        function!(library, "cuDeviceGet", DeviceGet),
        function!(library, "cuDeviceGetName", DeviceGetName),
        function!(library, "cuDeviceGetAttribute", DeviceGetAttribute),
        function!(library, "cuDeviceTotalMem_v2", DeviceTotalMem),
    );
    let mut gpus = Vec::new();
    for ordinal in 0..count.max(0) {
        let mut device = 0;
        succeed!(failed, "cuDeviceGet", get(&mut device, ordinal));
        let mut name = [0 as c_char; 256];
        succeed!(
            failed,
            "cuDeviceGetName",
            get_name(name.as_mut_ptr(), name.len() as c_int - 1, device)
        );
        let (mut major, mut minor) = (0, 0);
        for (attribute, value) in [
            (ATTRIBUTE_CAPABILITY_MAJOR, &mut major),
            (ATTRIBUTE_CAPABILITY_MINOR, &mut minor),
        ] {
            succeed!(failed, "cuDeviceGetAttribute", get_attribute(value, attribute, device));
        }
        let mut memory = 0usize;
        succeed!(failed, "cuDeviceTotalMem_v2", total_memory(&mut memory, device));
        gpus.push(Gpu {
            index: ordinal as u32,
            // The buffer's last byte is never written: the name ends there at the latest.
            name: CStr::from_ptr(name.as_ptr()).to_string_lossy().into_owned(),
            capability: (major.max(0) as u32, minor.max(0) as u32),
            memory_bytes: memory as u64,
        });
    }
    Driver::Ready { version, gpus }
}
