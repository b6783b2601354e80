//! PromQL in a build without the `promql` feature: the same types, nothing checked (`check`
//! accepts every text, `threshold::split` splits none). `validate` says that PromQL is not
//! checked ([`super::CHECKS_PROMQL`]); `import prometheus`, which needs the parser, refuses.

/// How a field's text is read (as `promql.rs`'s).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Form {
    pub selector: bool,
    pub template: bool,
    pub variables: bool,
}

/// A syntax error (as `promql.rs`'s); this build finds none.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    pub offset: usize,
    pub message: String,
}

/// Accepts `text`: this build does not check PromQL.
pub fn check(_text: &str, _form: Form) -> Result<(), SyntaxError> {
    Ok(())
}

pub mod threshold {
    /// A comparison operator of PromQL (as `promql/threshold.rs`'s).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Comparison {
        Gt,
        Geq,
        Lt,
        Leq,
        Eq,
        Neq,
    }

    /// `query op value` (as `promql/threshold.rs`'s).
    #[derive(Clone, Debug, PartialEq)]
    pub struct Threshold {
        pub query: String,
        pub op: Comparison,
        pub value: f64,
    }

    /// None: this build parses no PromQL.
    pub fn split(_text: &str) -> Option<Threshold> {
        None
    }

    /// Equal texts only: this build parses no PromQL.
    pub fn same_query(a: &str, b: &str) -> bool {
        a == b
    }
}
