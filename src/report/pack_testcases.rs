//! `mge pack-testcases`: the container written and what it holds.

use serde::Serialize;

use super::Report;
use crate::tensor::format_shape;
use crate::text::{counted, number, printable};

#[derive(Serialize)]
pub struct TestcaseTensor {
    pub name: String,
    pub shape: Vec<usize>,
    pub dtype: String,
}

#[derive(Serialize)]
pub struct PackTestcasesReport {
    pub container: String,
    pub model: String,
    pub size_bytes: usize,
    pub testcases: usize,
    /// The feeds the testcase holds.
    pub inputs: Vec<TestcaseTensor>,
    /// The outputs its assertions expect.
    pub expected: Vec<TestcaseTensor>,
    pub maxerr: f64,
}

impl Report for PackTestcasesReport {
    fn to_text(&self) -> String {
        let list = |tensors: &[TestcaseTensor]| {
            let described: Vec<String> = tensors
                .iter()
                .map(|t| format!("{} {} {}", t.name, format_shape(&t.shape), t.dtype))
                .collect();
            printable(&described.join(", ")).into_owned()
        };
        format!(
            "packed   {} ({} bytes): {} with {}\ninputs   {}\nexpected {} (AssertEqual maxerr {})\n",
            printable(&self.container),
            self.size_bytes,
            printable(&self.model),
            counted(self.testcases, "testcase"),
            list(&self.inputs),
            list(&self.expected),
            number(self.maxerr)
        )
    }
}
