//! megdnn's dtypes by the names `mge` gives them everywhere (info, io dumps,
//! profiles, the structural diff): a quantized one by its kind (`qint8`,
//! `quint8`, `qint32`), every other by numpy's name where numpy has one; and
//! each var's dtype in a graph, which MegEngine stores only for some vars.

use super::structure::{type_name, Operator, Structure};

/// `DTypeEnum` numbers the deduction below names.
const INT32: u8 = 4;
const QUINT8: u8 = 11;
const QINT32: u8 = 12;
const QINT8: u8 = 13;
const BOOL: u8 = 18;

/// `param.Reduce`'s `data_type` field (`DEFAULT`: its input's dtype).
const REDUCE_DATA_TYPE: usize = 2;

/// `param.Elemwise` modes whose output is `Bool`: LT, LEQ, EQ, NEQ, ISNAN, ISINF.
const COMPARISONS: [u32; 6] = [29, 30, 31, 61, 62, 63];

/// Types whose output (the first; each of a `Split`'s) has their first
/// input's dtype as megdnn deduces it, but that of a quantized convolution or
/// matrix product (`qint32`), and a reduction's where it is quantized or its
/// `data_type` says otherwise (left unknown).
const FIRST_INPUTS: &[&str] = &[
    "AdaptivePooling",
    "AdaptivePoolingForward",
    "AxisAddRemove",
    "BatchedMatrixMul",
    "Broadcast",
    "Concat",
    "ConvBias",
    "ConvBiasForward",
    "Convolution",
    "ConvolutionBackwardData",
    "ConvolutionForward",
    "Copy",
    "Dimshuffle",
    "Elemwise",
    "Identity",
    "IndexingMultiAxisVec",
    "LayerNorm",
    "MarkDynamicVar",
    "MarkNoBroadcastElemwise",
    "MatrixMul",
    "Pooling",
    "PoolingForward",
    "Reduce",
    "Reshape",
    "Resize",
    "ResizeForward",
    "SetSubtensor",
    "Softmax",
    "SoftmaxForward",
    "Split",
    "Subtensor",
];

/// megdnn's `DTypeEnum` (`dtype.fbs`), by number: the enumerator, which is
/// also the name megdnn's `DType::name()` gives (the engine's profile and
/// text dumps), and `mge`'s name.
const DTYPES: [(&str, &str); 22] = [
    ("Float32", "float32"),
    ("Uint8", "uint8"),
    ("Int8", "int8"),
    ("Int16", "int16"),
    ("Int32", "int32"),
    ("IntB1", "intb1"),
    ("IntB2", "intb2"),
    ("IntB4", "intb4"),
    ("Byte", "byte"),
    ("Float16", "float16"),
    ("UintB4", "uintb4"),
    ("Quantized8Asymm", "quint8"),
    ("QuantizedS32", "qint32"),
    ("QuantizedS8", "qint8"),
    ("Quantized4Asymm", "quint4"),
    ("QuantizedS4", "qint4"),
    ("QuantizedS16", "qint16"),
    ("BFloat16", "bfloat16"),
    ("Bool", "bool"),
    ("Uint16", "uint16"),
    ("QuantizedS1", "qint1"),
    ("Complex64", "complex64"),
];

/// The name of a graph's dtype, by its `DTypeEnum` number.
pub fn dtype_name(dtype: u8) -> String {
    DTYPES
        .get(dtype as usize)
        .map_or_else(|| format!("dtype {dtype}"), |(_, name)| name.to_string())
}

/// The name of the dtype megdnn names `engine` (`QuantizedS8`: `qint8`); a
/// name megdnn 1.13 does not give, lowercased.
pub fn engine_dtype_name(engine: &str) -> String {
    DTYPES
        .iter()
        .find(|(enumerator, _)| enumerator.eq_ignore_ascii_case(engine))
        .map_or_else(|| engine.to_lowercase(), |(_, name)| name.to_string())
}

/// Each var's dtype, by id: where the graph stores it (the var's own, its
/// operator's output dtype or parameter, the tensor a constant or an input
/// holds), else as megdnn deduces it from the operator's inputs where its
/// rule is plain (a shape is `int32`, a comparison `bool`, most operators
/// keep their first input's, a quantized convolution or matrix product
/// accumulates in `qint32`); none where neither tells.
pub fn graph_dtypes(graph: &Structure) -> Vec<Option<u8>> {
    let mut dtypes: Vec<Option<u8>> = graph.vars.iter().map(|var| var.dtype).collect();
    // Operators come in execution order: an input's dtype is known before its readers'.
    for operator in &graph.operators {
        let held = match operator.tensors.as_slice() {
            [tensor] => tensor.dtype,
            _ => None,
        };
        let deduced = held.or_else(|| deduced_dtype(operator, &dtypes));
        let outputs = match type_name(&operator.op_type) {
            "Split" => operator.outputs.as_slice(),
            _ => operator.outputs.get(..1).unwrap_or_default(),
        };
        for &id in outputs {
            if let Some(slot) = dtypes.get_mut(id as usize) {
                *slot = slot.or(deduced);
            }
        }
    }
    dtypes
}

/// The dtype of `operator`'s first output as megdnn deduces it from its
/// inputs' (`dtypes`), for the types whose rule is plain.
fn deduced_dtype(operator: &Operator, dtypes: &[Option<u8>]) -> Option<u8> {
    let name = type_name(&operator.op_type);
    if name == "GetVarShape" {
        return Some(INT32);
    }
    if !FIRST_INPUTS.contains(&name) {
        return None;
    }
    let input = (*dtypes.get(*operator.inputs.first()? as usize)?)?;
    let field = |index: usize| {
        let param = operator.params.first()?;
        param.table.u32(index).ok().flatten()
    };
    Some(match name {
        "Reduce" if [QINT8, QUINT8].contains(&input) || field(REDUCE_DATA_TYPE).unwrap_or(0) != 0 => return None,
        "Elemwise" if COMPARISONS.contains(&field(0).unwrap_or(0)) => BOOL,
        "Convolution" | "ConvolutionForward" | "ConvBias" | "ConvBiasForward" | "MatrixMul" | "BatchedMatrixMul"
            if [QINT8, QUINT8].contains(&input) =>
        {
            QINT32
        }
        _ => input,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_a_dtype_alike_by_number_and_by_the_engine_name() {
        assert_eq!(dtype_name(13), "qint8");
        assert_eq!(engine_dtype_name("QuantizedS8"), "qint8");
        assert_eq!(engine_dtype_name("Quantized8Asymm"), "quint8");
        assert_eq!(engine_dtype_name("Float32"), "float32");
        assert_eq!(dtype_name(200), "dtype 200");
        assert_eq!(engine_dtype_name("Float8"), "float8");
    }
}
