//! JSON literals: nested lists of numbers, or one number filling the input's declared shape.

use anyhow::{bail, Result};
use serde_json::Value;

use super::checked_element_count;
use crate::tensor::{HostTensor, TensorInfo};

pub(super) fn to_tensor(value: &Value, info: &TensorInfo) -> Result<HostTensor> {
    if let Value::Number(number) = value {
        let count = checked_element_count(&info.shape, info.dtype)?;
        let number = number_value(number, "")?;
        return HostTensor::from_f64(info.shape.clone(), info.dtype, std::iter::repeat_n(number, count));
    }
    let shape = nesting_shape(value);
    let mut values = Vec::new();
    flatten(value, &shape, &mut String::new(), &mut values)?;
    HostTensor::from_f64(shape, info.dtype, values)
}

/// The shape implied by the first element at each level; `flatten` checks the rest agree.
fn nesting_shape(mut value: &Value) -> Vec<usize> {
    let mut shape = Vec::new();
    while let Value::Array(items) = value {
        shape.push(items.len());
        match items.first() {
            Some(first) => value = first,
            None => break,
        }
    }
    shape
}

/// Appends the numbers of `value` in C order; `at` is its index path, like `[1][0]`.
fn flatten(value: &Value, shape: &[usize], at: &mut String, values: &mut Vec<f64>) -> Result<()> {
    let expected = if shape.is_empty() { "a number" } else { "a list" };
    match (value, shape.split_first()) {
        (Value::Number(number), None) => values.push(number_value(number, at)?),
        (Value::Array(items), Some((&len, inner))) => {
            if items.len() != len {
                bail!(
                    "ragged list: {} has {} elements where its siblings have {len}",
                    place(at),
                    items.len()
                );
            }
            for (index, item) in items.iter().enumerate() {
                let parent_len = at.len();
                at.push_str(&format!("[{index}]"));
                flatten(item, inner, at, values)?;
                at.truncate(parent_len);
            }
        }
        (Value::Array(_) | Value::Number(_), _) => {
            bail!(
                "ragged list: {} is {}, expected {expected} like its siblings",
                place(at),
                kind(value)
            )
        }
        _ => bail!("{} is {}, expected {expected}", place(at), kind(value)),
    }
    Ok(())
}

fn number_value(number: &serde_json::Number, at: &str) -> Result<f64> {
    match number.as_f64() {
        Some(value) => Ok(value),
        None => bail!("{} is out of range: {number}", place(at)),
    }
}

fn place(at: &str) -> String {
    if at.is_empty() {
        "the literal".to_string()
    } else {
        format!("element {at}")
    }
}

fn kind(value: &Value) -> String {
    match value {
        Value::Null => "null".to_string(),
        Value::Bool(flag) => format!("a bool ({flag})"),
        Value::Number(number) => format!("a number ({number})"),
        Value::String(text) => format!("a string ({text:?})"),
        Value::Array(_) => "a list".to_string(),
        Value::Object(_) => "an object".to_string(),
    }
}
