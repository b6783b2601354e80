//! Building blocks that know nothing of the API: the output layer (the one way to the
//! terminal, secrets redacted), safe file writes, `${file:}` reads, work on all cores (`par`),
//! and the readers of YAML, PromQL, JSON pointers and JSON strings.

pub mod file_ref;
pub mod json_string;
pub mod jsonpath;
pub mod output;
pub mod par;
// Without the `promql` feature `promql/off.rs` stands in: nothing is checked (`CHECKS_PROMQL`).
#[cfg_attr(not(feature = "promql"), path = "promql/off.rs")]
pub mod promql;
pub mod safe_write;
#[cfg(test)]
pub(crate) mod test_support;
pub mod yaml;

/// Whether this build checks PromQL (the `promql` feature, on by default): `validate` says so
/// when it does not, and `import prometheus` refuses to run.
pub const CHECKS_PROMQL: bool = cfg!(feature = "promql");
