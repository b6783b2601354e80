//! Building blocks that know nothing of the API: the output layer (the one way to the
//! terminal, secrets redacted), safe file writes, `${file:}` reads, and the readers of YAML,
//! PromQL, JSON pointers and JSON strings.

pub mod file_ref;
pub mod json_string;
pub mod jsonpath;
pub mod output;
pub mod promql;
pub mod safe_write;
#[cfg(test)]
pub(crate) mod test_support;
pub mod yaml;
