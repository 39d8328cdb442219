//! Tensor comparison with the formula of MegEngine's AssertEqual operator.

use anyhow::{bail, Result};

use crate::tensor::{format_shape, HostTensor};

/// `max(|e - g| / max(min(|e|, |g|), 1))` over all elements; NaN anywhere gives NaN,
/// which no `maxerr` accepts (as in the engine).
pub fn assert_equal_error(expected: &HostTensor, actual: &HostTensor) -> Result<f64> {
    if expected.shape != actual.shape {
        bail!(
            "shape {} differs from the expected {}",
            format_shape(&actual.shape),
            format_shape(&expected.shape)
        );
    }
    let mut worst = 0.0f64;
    for (e, g) in expected.values().zip(actual.values()) {
        let err = (e - g).abs() / e.abs().min(g.abs()).max(1.0);
        if err.is_nan() {
            return Ok(f64::NAN);
        }
        worst = worst.max(err);
    }
    Ok(worst)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::DType;

    fn tensor(values: &[f64]) -> HostTensor {
        HostTensor::from_f64(vec![values.len()], DType::F32, values.iter().copied()).unwrap()
    }

    #[test]
    fn relative_above_one_absolute_below() {
        let err = assert_equal_error(&tensor(&[100.0, 0.5]), &tensor(&[101.0, 0.5])).unwrap();
        assert!((err - 0.01).abs() < 1e-9, "{err}");
        let err = assert_equal_error(&tensor(&[0.25]), &tensor(&[0.5])).unwrap();
        assert!((err - 0.25).abs() < 1e-9, "{err}");
    }

    #[test]
    fn nan_never_passes_and_shapes_must_match() {
        assert!(assert_equal_error(&tensor(&[1.0]), &tensor(&[f64::NAN]))
            .unwrap()
            .is_nan());
        assert!(assert_equal_error(&tensor(&[1.0]), &tensor(&[1.0, 2.0])).is_err());
    }
}
