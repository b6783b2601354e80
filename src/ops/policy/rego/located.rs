//! regorus's errors in cfgctl's words: each at its file, line and column.

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
