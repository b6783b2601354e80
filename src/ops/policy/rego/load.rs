//! The policy directory read into a Rego engine: its `.rego` files in a sorted walk (hidden
//! entries skipped, symlinks not followed, as for manifests), each parsed as Rego v1, else
//! as v0; a file that reads as neither is a problem located at regorus's line and column.

use std::path::{Path, PathBuf};

use crate::config::diagnostic::{Diagnostic, Problem};
use crate::config::settings::PolicyDir;
use crate::manifest::NotInside;
use crate::util::yaml::Pos;

/// The engine with every file of the directory, and the packages they declare.
pub(crate) struct Loaded {
    pub engine: regorus::Engine,
    /// `data.main`, `data.cfgctl.plan`, ... (sorted, each once).
    pub packages: std::collections::BTreeSet<String>,
    /// The files read, as shown in messages, with their package, in the order of the
    /// engine's modules.
    pub files: Vec<(PathBuf, String)>,
}

impl Loaded {
    /// Where an error regorus does not place is put (the directory holds a file at least).
    pub fn first_file(&self) -> &Path {
        self.files
            .first()
            .map_or(Path::new("."), |(f, _)| f.as_path())
    }
}

/// Reads the policy directory `policy` of the repository `repo` (whose settings file is
/// `settings_file`). Every problem is a located diagnostic; none stops the reading of the
/// other files.
pub(crate) fn load(
    repo: &Path,
    settings_file: &Path,
    policy: &PolicyDir,
) -> Result<Loaded, Vec<Diagnostic>> {
    let dir = repo.join(&policy.path);
    let at_setting = |message: String| {
        vec![Diagnostic::error(
            settings_file,
            policy.pos,
            Problem::PolicyInvalid(message),
        )]
    };
    // Every component is checked, so that no symlink leads the policy out of the repository.
    match crate::manifest::no_symlink_on_the_way(repo, &policy.path) {
        Ok(()) => {}
        Err(NotInside::Missing) => {
            return Err(at_setting(format!(
                "the policy directory `{}` does not exist",
                shown(&dir).display()
            )))
        }
        Err(NotInside::Symlink(walked)) => {
            return Err(at_setting(format!(
                "`{}` is a symlink, and cfgctl follows none: put the policy directory itself there",
                shown(&walked).display()
            )))
        }
    }
    if !dir.is_dir() {
        return Err(at_setting(format!(
            "`{}` is not a directory",
            shown(&dir).display()
        )));
    }
    let mut files = Vec::new();
    let walker = walkdir::WalkDir::new(&dir)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.'));
    for entry in walker {
        let entry =
            entry.map_err(|e| at_setting(format!("cannot read the policy directory: {e}")))?;
        let is_rego = entry.path().extension().is_some_and(|e| e == "rego");
        if entry.file_type().is_file() && is_rego {
            files.push(shown(entry.path()));
        }
    }
    if files.is_empty() {
        return Err(at_setting(format!(
            "the policy directory `{}` holds no *.rego file",
            shown(&dir).display()
        )));
    }
    let mut engine =
        engine().map_err(|e| at_setting(format!("cannot set up the policy engine: {e}")))?;
    let mut packages = std::collections::BTreeSet::new();
    let mut read = Vec::new();
    let mut problems = Vec::new();
    for file in files {
        match add_file(&mut engine, &file) {
            Ok(package) => {
                packages.insert(package.clone());
                read.push((file, package));
            }
            Err(d) => problems.push(*d),
        }
    }
    if problems.is_empty() {
        Ok(Loaded {
            engine,
            packages,
            files: read,
        })
    } else {
        Err(problems)
    }
}

/// An engine with no file yet, as every policy is evaluated.
pub(crate) fn engine() -> anyhow::Result<regorus::Engine> {
    let mut engine = regorus::Engine::new();
    // As OPA and conftest evaluate by default: a built-in function's error (`to_number("x")`)
    // makes its expression undefined, it does not stop the evaluation.
    engine.set_strict_builtin_errors(false);
    // A pull request may change the policy: its evaluation is bounded (R4-3).
    super::budget::bound(&mut engine)?;
    Ok(engine)
}

fn shown(path: &Path) -> PathBuf {
    path.strip_prefix(".").unwrap_or(path).to_path_buf()
}

/// One file: Rego v1 (OPA 1.0's and conftest's default), else v0 (`deny[msg] { ... }`);
/// a file that reads as neither is reported with the v1 reading's error.
pub(crate) fn add_file(
    engine: &mut regorus::Engine,
    file: &Path,
) -> Result<String, Box<Diagnostic>> {
    let text = std::fs::read_to_string(file).map_err(|e| {
        Box::new(Diagnostic::error(
            file,
            Pos::new(1, 1),
            Problem::PolicyInvalid(format!("cannot read the Rego file: {e}")),
        ))
    })?;
    let name = file.display().to_string();
    engine.set_rego_v0(false);
    match engine.add_policy(name.clone(), text.clone()) {
        Ok(package) => Ok(package),
        Err(v1_error) => {
            engine.set_rego_v0(true);
            let v0 = engine.add_policy(name, text);
            engine.set_rego_v0(false);
            v0.map_err(|_| Box::new(super::located::located(file, &v1_error.to_string())))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regorus_error_is_located_at_its_file_line_and_column() {
        let message =
            "\n--> policy/a.rego:3:7\n  |\n3 | deny x {\n  |       ^\nerror: unexpected `{`";
        let d = super::super::located::located(Path::new("other.rego"), message);
        assert_eq!(d.file, PathBuf::from("policy/a.rego"));
        assert_eq!(d.pos, Pos::new(3, 7));
        assert_eq!(d.problem.to_string(), "policy: unexpected `{`");
    }

    #[test]
    fn an_error_without_a_place_is_at_the_files_start() {
        let d = super::super::located::located(Path::new("p/b.rego"), "something failed");
        assert_eq!(d.file, PathBuf::from("p/b.rego"));
        assert_eq!(d.pos, Pos::new(1, 1));
        assert_eq!(d.problem.to_string(), "policy: something failed");
    }
}
