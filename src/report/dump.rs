//! `mge dump`: what was written where.

use serde::Serialize;

use super::Report;
use crate::text::{counted, printable};

/// One target of `mge dump`, written.
#[derive(Serialize)]
#[serde(tag = "what", rename_all = "snake_case")]
pub enum Written {
    LayoutTransformedModel {
        file: String,
    },
    Testcases {
        count: usize,
        dir: String,
    },
    Outputs {
        count: usize,
        dir: String,
    },
    IoDump {
        vars: usize,
        operators: usize,
        dir: String,
    },
    /// A raw io dump from elsewhere, converted: its vars in var-id order.
    ConvertedIoDump {
        vars: usize,
        operators: usize,
        from: String,
        dir: String,
    },
}

#[derive(Serialize)]
pub struct DumpReport {
    pub written: Vec<Written>,
}

impl Report for DumpReport {
    fn to_text(&self) -> String {
        let lines: Vec<String> = self
            .written
            .iter()
            .map(|written| match written {
                Written::LayoutTransformedModel { file } => format!("layout-transformed model  {file}"),
                Written::Testcases { count, dir } => format!("testcases  {count} in {dir}"),
                Written::Outputs { count, dir } => format!("outputs  {count} in {dir}"),
                Written::IoDump { vars, operators, dir } => {
                    let (vars, operators) = (counted(*vars, "var"), counted(*operators, "operator"));
                    format!("io dump  {vars} of {operators} in {dir} (index.json in execution order)")
                }
                Written::ConvertedIoDump {
                    vars,
                    operators,
                    from,
                    dir,
                } => {
                    let (vars, operators) = (counted(*vars, "var"), counted(*operators, "operator"));
                    format!("io dump  {vars} of {operators} from {from} in {dir} (index.json in var-id order)")
                }
            })
            // A line per thing written, whatever its path holds.
            .map(|line| printable(&line).into_owned())
            .collect();
        lines.join("\n") + "\n"
    }
}
