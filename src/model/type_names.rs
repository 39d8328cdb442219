//! The operator types of an FBS v1 graph, which names each operator's type
//! by a number only: `type_id`, a hash of the class name the type was
//! registered under (`megbrain/utils/hash_ct.h`, `serialization/sereg.h`):
//! XXH64 with seed 20160701 of the name and its terminating NUL
//! (`MGB_HASH_STR`, MegEngine 1.x), or of the name without its NUL and its
//! version suffix (`MGB_HASH_STR_WITHOUT_TAIL_0_AND_VERSION`, what older
//! dumps, magic `MGBS`, hold). The names are the classes MegEngine 1.13
//! registers for serialization, each with the version suffixes it registers
//! (`ConvolutionV2`, `PoolingV1`).

use std::collections::HashMap;
use std::sync::OnceLock;

/// `MGB_HASH_STR`'s seed.
const SEED: u64 = 20160701;

/// The classes MegEngine 1.13 registers for serialization (`*.sereg.h`),
/// without their version suffix.
const REGISTERED: &[&str] = &[
    "AdaptivePooling",
    "AdaptivePoolingBackward",
    "AddUpdate",
    "AffineInt",
    "Alloc",
    "Argmax",
    "Argmin",
    "Argsort",
    "ArgsortBackward",
    "AssertEqual",
    "AtlasRuntimeOpr",
    "AxisAddRemove",
    "BatchConvBiasForward",
    "BatchNorm",
    "BatchNormBackward",
    "BatchedIncrMeshIndexing",
    "BatchedMatrixMul",
    "BatchedMeshIndexing",
    "BatchedSetMeshIndexing",
    "BetaRNG",
    "Broadcast",
    "CallbackInjector",
    "CambriconRuntimeOpr",
    "CheckNonFinite",
    "Concat",
    "CondExecMark",
    "CondExecMarkIfNeed",
    "CondExecMerge",
    "CondExecPred",
    "CondExecPredLogical",
    "CondTake",
    "ConvBias",
    "ConvBiasForward",
    "Convolution",
    "Convolution3D",
    "Convolution3DBackwardData",
    "Convolution3DBackwardFilter",
    "ConvolutionBackwardData",
    "ConvolutionBackwardFilter",
    "Copy",
    "CorrelationBackwardData",
    "CorrelationForward",
    "Cross",
    "Cumsum",
    "CvtColor",
    "DctChannelSelect",
    "DeformableConvBackwardData",
    "DeformableConvBackwardFilter",
    "DeformableConvForward",
    "DeformablePSROIPoolingBackward",
    "DeformablePSROIPoolingForward",
    "Diag",
    "DiagBackward",
    "Dimshuffle",
    "Dot",
    "Dropout",
    "DropoutBackward",
    "Elemwise",
    "ElemwiseMultiType",
    "ExponentialRNG",
    "ExternCOprRunner",
    "Eye",
    "FakeQuant",
    "FakeQuantBackward",
    "Fill",
    "FillLike",
    "Flip",
    "GammaRNG",
    "GaussianBlur",
    "GaussianRNG",
    "GeneralNorm",
    "GeneralNormBackward",
    "GetVarShape",
    "GroupLocal",
    "GroupLocalBackwardData",
    "GroupLocalBackwardFilter",
    "Host2DeviceCopy",
    "Identity",
    "Images2Neibs",
    "Images2NeibsBackward",
    "ImmutableTensor",
    "IncrMeshIndexing",
    "IncrSubtensor",
    "IndexingIncrMultiAxisVec",
    "IndexingMultiAxisVec",
    "IndexingOneHot",
    "IndexingRemap",
    "IndexingRemapBackward",
    "IndexingSetMultiAxisVec",
    "IndexingSetOneHot",
    "InputMaker",
    "InvalidGrad",
    "JITExecutor",
    "LRN",
    "LRNBackward",
    "LSQ",
    "LSQBackward",
    "LSTM",
    "LSTMBackward",
    "LSTMCell",
    "LSTMCellForward",
    "LSTMForward",
    "LayerNorm",
    "LayerNormBackward",
    "Linspace",
    "Local",
    "LocalBackwardData",
    "LocalBackwardFilter",
    "LocalShareBackwardData",
    "LocalShareBackwardFilter",
    "LocalShareForward",
    "Loop",
    "LoopGrad",
    "MagicMindRuntimeOpr",
    "MarkDynamicVar",
    "MarkNoBroadcastElemwise",
    "MaskConvolution",
    "MaskPropagate",
    "MaskedFill",
    "MatrixInverse",
    "MatrixMul",
    "MeshIndexing",
    "MultiHeadAttn",
    "MultiHeadAttnBackward",
    "MultinomialRNG",
    "MultipleDeviceTensorHolder",
    "MultipleDeviceTensorWithFormatHolder",
    "NMSKeep",
    "NMSKeepMGB",
    "NonZero",
    "NvOf",
    "Padding",
    "PaddingBackward",
    "ParamPackConcat",
    "ParamPackSplit",
    "PermutationRNG",
    "PersistentOutputStorage",
    "PoissonRNG",
    "Pooling",
    "PoolingBackward",
    "PowC",
    "RNN",
    "RNNBackward",
    "RNNCell",
    "RNNCellForward",
    "RNNForward",
    "ROIAlign",
    "ROIAlignBackward",
    "ROIPooling",
    "ROIPoolingBackward",
    "Reduce",
    "RegionRestrictedConvolution",
    "RegionRestrictedConvolutionBackwardData",
    "RegionRestrictedConvolutionBackwardFilter",
    "RelayoutFormat",
    "Remap",
    "RemapBackwardData",
    "RemapBackwardMat",
    "Reshape",
    "Resize",
    "Resize3D",
    "ResizeBackward",
    "Rotate",
    "SVD",
    "SetGrad",
    "SetMeshIndexing",
    "SetSubtensor",
    "ShapeHint",
    "SharedDeviceTensor",
    "SharedDeviceTensorWithFormat",
    "ShuffleRNG",
    "ShuffleRNGBackward",
    "Sleep",
    "SlidingWindowTranspose",
    "SlidingWindowTransposeBackward",
    "Softmax",
    "SoftmaxBackward",
    "Split",
    "Subtensor",
    "TQT",
    "TQTBackward",
    "TensorRTOpr",
    "TensorRTRuntimeOpr",
    "TopK",
    "TypeCvt",
    "UniformRNG",
    "VirtualDep",
    "VirtualGrad",
    "VirtualLoss",
    "VolatileSharedDeviceTensor",
    "WarpAffine",
    "WarpPerspective",
    "WarpPerspectiveBackwardData",
    "WarpPerspectiveBackwardMat",
    "Where",
    "WhereBackward",
];

/// Version suffixes a class may be registered with (`PoolingV1`, `ConvBiasForwardV4`).
const VERSIONS: &[&str] = &["", "V0", "V1", "V2", "V3", "V4", "V5", "V6", "1", "2"];

/// The class name whose `type_id` is `id`, among the registered ones.
pub fn type_name(id: u64) -> Option<&'static str> {
    static BY_ID: OnceLock<HashMap<u64, String>> = OnceLock::new();
    let by_id = BY_ID.get_or_init(|| {
        let versioned = REGISTERED
            .iter()
            .flat_map(|name| VERSIONS.iter().map(move |version| format!("{name}{version}")))
            .map(|name| (type_id(&name), name));
        let unversioned = REGISTERED
            .iter()
            .map(|name| (nonzero(xxh64(name.as_bytes(), SEED)), name.to_string()));
        versioned.chain(unversioned).collect()
    });
    by_id.get(&id).map(String::as_str)
}

/// `MGB_HASH_STR(name)`: XXH64 of the name with its NUL.
fn type_id(name: &str) -> u64 {
    let mut bytes = name.as_bytes().to_vec();
    bytes.push(0);
    nonzero(xxh64(&bytes, SEED))
}

/// `EnsureHashConstexpr`: a hash is never 0.
fn nonzero(hash: u64) -> u64 {
    hash.max(1)
}

const PRIME1: u64 = 11400714785074694791;
const PRIME2: u64 = 14029467366897019727;
const PRIME3: u64 = 1609587929392839161;
const PRIME4: u64 = 9650029242287828579;
const PRIME5: u64 = 2870177450012600261;

fn round(acc: u64, lane: u64) -> u64 {
    acc.wrapping_add(lane.wrapping_mul(PRIME2))
        .rotate_left(31)
        .wrapping_mul(PRIME1)
}

fn merge(acc: u64, lane: u64) -> u64 {
    (acc ^ round(0, lane)).wrapping_mul(PRIME1).wrapping_add(PRIME4)
}

fn u64_at(bytes: &[u8]) -> u64 {
    u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"))
}

/// XXH64, as MegEngine's `XXHash64CT` computes it.
fn xxh64(input: &[u8], seed: u64) -> u64 {
    let mut rest = input;
    let mut hash = if input.len() >= 32 {
        let mut lanes = [
            seed.wrapping_add(PRIME1).wrapping_add(PRIME2),
            seed.wrapping_add(PRIME2),
            seed,
            seed.wrapping_sub(PRIME1),
        ];
        while rest.len() >= 32 {
            for (at, lane) in lanes.iter_mut().enumerate() {
                *lane = round(*lane, u64_at(&rest[8 * at..]));
            }
            rest = &rest[32..];
        }
        let [a, b, c, d] = lanes;
        let hash = a
            .rotate_left(1)
            .wrapping_add(b.rotate_left(7))
            .wrapping_add(c.rotate_left(12))
            .wrapping_add(d.rotate_left(18));
        lanes.iter().fold(hash, |hash, &lane| merge(hash, lane))
    } else {
        seed.wrapping_add(PRIME5)
    };
    hash = hash.wrapping_add(input.len() as u64);
    while rest.len() >= 8 {
        hash = (hash ^ round(0, u64_at(rest)))
            .rotate_left(27)
            .wrapping_mul(PRIME1)
            .wrapping_add(PRIME4);
        rest = &rest[8..];
    }
    if rest.len() >= 4 {
        let word = u64::from(u32::from_le_bytes(rest[..4].try_into().expect("4 bytes")));
        hash = (hash ^ word.wrapping_mul(PRIME1))
            .rotate_left(23)
            .wrapping_mul(PRIME2)
            .wrapping_add(PRIME3);
        rest = &rest[4..];
    }
    for &byte in rest {
        hash = (hash ^ u64::from(byte).wrapping_mul(PRIME5))
            .rotate_left(11)
            .wrapping_mul(PRIME1);
    }
    hash ^= hash >> 33;
    hash = hash.wrapping_mul(PRIME2);
    hash ^= hash >> 29;
    hash = hash.wrapping_mul(PRIME3);
    hash ^ (hash >> 32)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference values of XXH64 (xxHash's own test vectors).
    #[test]
    fn hashes_as_xxh64() {
        assert_eq!(xxh64(b"", 0), 0xEF46DB3751D8E999);
        assert_eq!(xxh64(b"a", 0), 0xD24EC4F1A98C6E5B);
        assert_eq!(xxh64(b"abc", 0), 0x44BC2CF5AD770999);
        assert_eq!(xxh64(b"Nobody inspects the spammish repetition", 0), 0xFBCEA83C8A378BF1);
    }

    #[test]
    fn names_the_registered_types() {
        assert_eq!(type_name(type_id("ConvolutionV2")), Some("ConvolutionV2"));
        assert_eq!(type_name(type_id("Elemwise")), Some("Elemwise"));
        assert_eq!(type_name(12345), None);
        // What the `MGBS` dumps of shared/real-models hold (xornet_chenls_mgbs.mge).
        assert_eq!(type_name(0x3107308c558de242), Some("MatrixMul"));
        assert_eq!(type_name(0xd6c488c11172ec08), Some("Elemwise"));
    }
}
