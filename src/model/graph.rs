//! The fields of an FBS v2 graph (`schema_v2.fbs` at MegEngine 1.13), by
//! index: what `structure` reads and `edit` and `names` write.

/// Field indices of `Model`.
pub mod model {
    pub const MGE_VERSION: usize = 0;
    pub const MODEL_VERSION: usize = 1;
    pub const OPRS: usize = 2;
    pub const MIDDLE_TENSORS: usize = 3;
    pub const OUTPUT_VARS: usize = 4;
    pub const OUTPUT_ALIAS: usize = 5;
    pub const NR_SHARED_TENSOR: usize = 6;
    pub const METADATA: usize = 7;
}

/// Field indices of `Operator`.
pub mod operator {
    pub const TYPE: usize = 0;
    pub const TYPE_ID: usize = 1;
    pub const NAME: usize = 2;
    pub const PARAM_TYPE: usize = 3;
    pub const PARAM: usize = 4;
    pub const INPUTS: usize = 7;
    pub const OUTPUTS: usize = 8;
    pub const TENSORS: usize = 11;
    pub const OPR_VERSION: usize = 12;
}

/// Field indices of `Tensor` (and of `MiddleTensor`, which has its first five).
pub mod tensor {
    pub const NAME: usize = 0;
    pub const SHAPE: usize = 1;
    pub const COMP_NODE: usize = 2;
    pub const DTYPE: usize = 3;
    pub const FORMAT_TYPE: usize = 4;
    pub const FORMAT: usize = 5;
    pub const DATA: usize = 6;
}

/// Field indices of `OutputVar` and `OutputAlias`.
pub mod output {
    pub const COMPACT_ID: usize = 0;
    pub const ORIGINAL_ID: usize = 1;
    pub const ALIAS_ID: usize = 0;
    pub const ALIAS_NAME: usize = 1;
}
