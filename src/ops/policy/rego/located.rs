//! regorus's errors in cfgctl's words: each at its file, line and column. The evaluation
//! hands its failure up unlocated (`Failure`), and the engine's door (`rego::findings`)
//! locates it here, once.

use std::path::Path;

use crate::config::diagnostic::{Diagnostic, Problem};
use crate::util::yaml::Pos;

/// A regorus error as a diagnostic: regorus writes `--> FILE:LINE:COL`, the source line, a
/// caret and `error: MESSAGE`; other errors have no place and are put at `file`'s start.
pub(crate) fn located(file: &Path, message: &str) -> Diagnostic {
    let place = message.lines().find_map(|l| {
        let rest = l.trim_start().strip_prefix("--> ")?;
        let (rest, col) = rest.rsplit_once(':')?;
        let (path, line) = rest.rsplit_once(':')?;
        Some((
            std::path::PathBuf::from(path),
            Pos::new(line.trim().parse().ok()?, col.trim().parse().ok()?),
        ))
    });
    let text = message
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("error: "))
        .unwrap_or_else(|| message.trim());
    let text = if place.is_some() {
        text
    } else {
        message.trim()
    };
    let (path, pos) = place.unwrap_or_else(|| (file.to_path_buf(), Pos::new(1, 1)));
    Diagnostic::error(path, pos, Problem::PolicyInvalid(text.to_string()))
}

/// Why a rule gave no answer.
pub(super) enum Failure {
    /// regorus's error (its place in its text, when it has one).
    Error(String),
    /// The evaluation passed its budget ([`super::budget`]): at the rule's first definition.
    Budget {
        rule: String,
        at: Option<(std::path::PathBuf, Pos)>,
    },
}

impl Failure {
    /// The failure as a diagnostic; one with no place of its own is put at `file`'s start.
    pub(super) fn located(&self, file: &Path) -> Diagnostic {
        match self {
            Failure::Error(e) => located(file, e),
            Failure::Budget { rule, at } => {
                let (file, pos) = at.clone().unwrap_or_else(|| (file.into(), Pos::new(1, 1)));
                let message = format!(
                    "`{rule}` {} of {} steps: a loop over too many values?",
                    super::budget::PASSED,
                    super::budget::STEPS
                );
                Diagnostic::error(file, pos, Problem::PolicyInvalid(message))
            }
        }
    }
}
