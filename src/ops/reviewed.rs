//! `apply DIR --reviewed PLANFILE` (docs/product.md §6): the plan made now is applied only when
//! every action of it is in the saved plan a reviewer approved (`plan::review::
//! changed_since_review`); otherwise nothing is sent and what changed since review is listed.

use std::path::{Path, PathBuf};

use crate::plan::Plan;

/// Why a fresh plan is not applied under `--reviewed`.
#[derive(Debug, thiserror::Error)]
pub enum ReviewedError {
    #[error("--reviewed {}: cannot read the reviewed plan: {source}", file.display())]
    Unreadable {
        file: PathBuf,
        #[source]
        source: crate::plan::file::SavedPlanError,
    },
    #[error("--reviewed {}: cannot open the reviewed plan: {source}", file.display())]
    Open {
        file: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The differences are listed by the command edge, one a line, under "changed since
    /// review:".
    #[error("the plan differs from the reviewed plan {} in {}: nothing was changed (plan, review and merge again)", file.display(), crate::ops::plural(differences.len(), "change", "changes"))]
    Changed {
        file: PathBuf,
        differences: Vec<String>,
    },
}

/// Holds `fresh` to the reviewed plan saved at `file`.
pub fn check_reviewed(file: &Path, fresh: &Plan) -> Result<(), ReviewedError> {
    let opened = std::fs::File::open(file).map_err(|source| ReviewedError::Open {
        file: file.to_path_buf(),
        source,
    })?;
    let reviewed =
        crate::apply::saved::parse(std::io::BufReader::new(opened)).map_err(|source| {
            ReviewedError::Unreadable {
                file: file.to_path_buf(),
                source,
            }
        })?;
    let differences = crate::plan::review::changed_since_review(&reviewed, fresh);
    if differences.is_empty() {
        return Ok(());
    }
    Err(ReviewedError::Changed {
        file: file.to_path_buf(),
        differences,
    })
}
