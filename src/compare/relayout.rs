//! Vars one run keeps in a blocked layout and the other in NCHW: the engine's
//! NCHW44 and NCHW88 (`--layout nchw44`, `nchw88`) store a feature map
//! `(N, C, H, W)` as `(N, ceil(C/k), H, W, k)`, channels padded to a multiple
//! of k. Read back as NCHW, the two runs' values can still be compared.

use crate::tensor::TensorView;

/// A blocked view's values laid out in `nchw`'s shape (its padding left
/// out), with the block size; `None` when `blocked` is no blocked layout of
/// that shape.
pub fn as_nchw(blocked: TensorView, nchw: &[usize]) -> Option<(Vec<u8>, usize)> {
    let [n, c, h, w] = *nchw else {
        return None;
    };
    let [bn, blocks, bh, bw, k] = *blocked.shape else {
        return None;
    };
    if (bn, bh, bw) != (n, h, w) || !matches!(k, 4 | 8) || blocks != c.div_ceil(k) || blocked.fortran {
        return None;
    }
    let size = blocked.element.size();
    let mut data = Vec::with_capacity(n * c * h * w * size);
    for image in 0..n {
        for channel in 0..c {
            for row in 0..h {
                for column in 0..w {
                    let at = (((image * blocks + channel / k) * h + row) * w + column) * k + channel % k;
                    data.extend_from_slice(blocked.data.get(at * size..(at + 1) * size)?);
                }
            }
        }
    }
    Some((data, k))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::{DType, HostTensor};

    #[test]
    fn reads_nchw44_back_as_nchw_without_its_padding() {
        // (1, 6, 1, 2) as NCHW44: 2 blocks of 4 channels, the last two padding.
        let nchw: Vec<f64> = (0..12).map(f64::from).collect();
        let mut blocked = vec![-1.0; 16];
        for channel in 0..6 {
            for column in 0..2 {
                blocked[((channel / 4) * 2 + column) * 4 + channel % 4] = nchw[channel * 2 + column];
            }
        }
        let blocked = HostTensor::from_f64(vec![1, 2, 1, 2, 4], DType::F32, blocked).unwrap();
        let (data, k) = as_nchw(blocked.view(), &[1, 6, 1, 2]).unwrap();
        let expected = HostTensor::from_f64(vec![1, 6, 1, 2], DType::F32, nchw).unwrap();
        assert_eq!((&data, k), (&expected.data, 4));
        assert!(as_nchw(blocked.view(), &[1, 9, 1, 2]).is_none());
        assert!(as_nchw(expected.view(), &[1, 6, 1, 2]).is_none());
    }
}
