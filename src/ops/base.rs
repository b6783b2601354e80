//! `--base REV` (docs/product.md §6): the secret references of the manifests as they were at a
//! git revision, read with the `git` command (no git library: the one a CI runner has, with its
//! credentials and its shallow-clone rules). A secret field whose reference differs between REV
//! and the working tree is an update that sends the new value: the ops layer hands the
//! references of REV to `secrets::stand_in`, which puts them where the target answered
//! `**REDACTED**`, so the pure planner sees the change as any other.
//!
//! Also the commit a plan is made from (`git rev-parse HEAD`), named in the plan.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::registry::{Address, Kind};

pub use crate::secrets::BaseRefs;

/// A base that could not be read: each says how to make it readable.
#[derive(Debug, thiserror::Error)]
pub enum BaseError {
    #[error("--base {rev}: a revision cannot start with `-`")]
    BadRevision { rev: String },
    #[error("--base {rev}: cannot run git ({source}); --base reads the manifests at REV with the `git` command, so install git")]
    NoGit {
        rev: String,
        #[source]
        source: std::io::Error,
    },
    #[error("--base {rev}: {} is not inside a git repository ({detail}); --base compares with a revision of the repository holding the manifests: run in a clone (actions/checkout, or `git clone`)", dir.display())]
    NotARepository {
        rev: String,
        dir: PathBuf,
        detail: String,
    },
    #[error("--base {rev}: no such revision in the repository of {}{}", dir.display(), fetch_hint(rev, *shallow))]
    UnknownRevision {
        rev: String,
        dir: PathBuf,
        shallow: bool,
    },
    #[error("--base {rev}: cannot read {} at {rev}: {detail}", file.display())]
    Read {
        rev: String,
        file: PathBuf,
        detail: String,
    },
}

/// How to get a revision a clone does not have.
fn fetch_hint(rev: &str, shallow: bool) -> String {
    let branch = rev.strip_prefix("origin/").unwrap_or(rev);
    let how = format!(
        "fetch it first (`git fetch --depth=50 origin {branch}`; in GitHub Actions, `fetch-depth: 0` on actions/checkout; in GitLab CI, `GIT_DEPTH: 0`)"
    );
    if shallow {
        format!(": this is a shallow clone, which does not hold it; {how}")
    } else {
        format!(": {how}, or check the name")
    }
}

fn git(dir: &Path, args: &[&str]) -> std::io::Result<std::process::Output> {
    Command::new("git")
        .arg("-C")
        .arg(if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        })
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(std::process::Stdio::null())
        .output()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).trim().to_string()
}

/// The commit `git rev-parse HEAD` names in the repository holding `dir` (`None` outside a
/// repository, without git, or before the first commit).
pub fn head_commit(dir: &Path) -> Option<String> {
    let out = git(dir, &["rev-parse", "--verify", "--quiet", "HEAD^{commit}"]).ok()?;
    out.status.success().then(|| text(&out.stdout))
}

/// The commit REV names in the repository holding `dir`; an error says how to fetch it.
pub fn resolve(dir: &Path, rev: &str) -> Result<String, BaseError> {
    if rev.starts_with('-') || rev.is_empty() {
        return Err(BaseError::BadRevision { rev: rev.into() });
    }
    let no_git = |source| BaseError::NoGit {
        rev: rev.into(),
        source,
    };
    let top = git(dir, &["rev-parse", "--show-toplevel"]).map_err(no_git)?;
    if !top.status.success() {
        return Err(BaseError::NotARepository {
            rev: rev.into(),
            dir: dir.to_path_buf(),
            detail: text(&top.stderr),
        });
    }
    let spec = format!("{rev}^{{commit}}");
    let out = git(dir, &["rev-parse", "--verify", "--quiet", &spec]).map_err(no_git)?;
    if out.status.success() {
        return Ok(text(&out.stdout));
    }
    let shallow = git(dir, &["rev-parse", "--is-shallow-repository"])
        .map(|o| text(&o.stdout) == "true")
        .unwrap_or(false);
    Err(BaseError::UnknownRevision {
        rev: rev.into(),
        dir: dir.to_path_buf(),
        shallow,
    })
}

/// The secret references at `commit` of the resources `wanted` names (address, the file that
/// declares it now): each file read at `commit` (`git show COMMIT:./FILE`, relative to the
/// file's folder), once. A file that did not exist then, or a resource it did not declare
/// then, has no base: its references stand as they are (a create sends them anyway).
pub fn read_refs(
    rev: &str,
    commit: &str,
    wanted: &[(Address, PathBuf)],
) -> Result<BaseRefs, BaseError> {
    let mut by_file: BTreeMap<&Path, Vec<&Address>> = BTreeMap::new();
    for (address, file) in wanted {
        by_file.entry(file.as_path()).or_default().push(address);
    }
    let mut refs = BaseRefs::default();
    for (file, addresses) in by_file {
        let Some(text) = show(rev, commit, file)? else {
            continue;
        };
        for (address, found) in documents_refs(&text) {
            if addresses.contains(&&address) {
                refs.0.insert(address, found);
            }
        }
    }
    Ok(refs)
}

/// A file's text at `commit`; `None` when it did not exist there.
fn show(rev: &str, commit: &str, file: &Path) -> Result<Option<String>, BaseError> {
    let folder = file.parent().unwrap_or(Path::new(""));
    let name = file.file_name().map(Path::new).unwrap_or(file);
    let object = format!("{commit}:./{}", name.display());
    let out = git(folder, &["show", &object]).map_err(|source| BaseError::NoGit {
        rev: rev.into(),
        source,
    })?;
    if out.status.success() {
        return String::from_utf8(out.stdout)
            .map(Some)
            .map_err(|_| BaseError::Read {
                rev: rev.into(),
                file: file.to_path_buf(),
                detail: "not UTF-8 text".into(),
            });
    }
    let err = text(&out.stderr);
    // "path 'x' does not exist in 'c'", "exists on disk, but not in 'c'": no base for it.
    if err.contains("does not exist") || err.contains("exists on disk, but not in") {
        return Ok(None);
    }
    Err(BaseError::Read {
        rev: rev.into(),
        file: file.to_path_buf(),
        detail: err,
    })
}

/// The secret references of every manifest a file's text declares (a text that does not
/// parse declares none: the base is only compared with, never checked).
fn documents_refs(text: &str) -> Vec<(Address, BTreeMap<String, String>)> {
    let docs: Vec<Value> = match crate::yaml::parse_documents(text) {
        Ok(docs) => docs.into_iter().map(|d| d.value).collect(),
        Err(_) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Array(items)) => items,
            Ok(v) => vec![v],
            Err(_) => return Vec::new(),
        },
    };
    let docs = docs.into_iter().flat_map(|d| match d {
        Value::Array(items) => items,
        other => vec![other],
    });
    let mut out = Vec::new();
    for doc in docs {
        let Some(kind) = doc
            .get("kind")
            .and_then(Value::as_str)
            .and_then(Kind::from_name)
        else {
            continue;
        };
        let Some(spec) = doc.get("spec") else {
            continue;
        };
        let slug = crate::registry::object_slug(kind, spec);
        let found: BTreeMap<String, String> = kind
            .def()
            .secrets_in(spec)
            .into_iter()
            .filter(|f| crate::secrets::parse(&f.value).is_some())
            .map(|f| (f.pointer, f.value))
            .collect();
        if !found.is_empty() {
            out.push((Address::new(kind, slug), found));
        }
    }
    out
}

/// What the plan records of how it was compared (`plan::review::Review`, its commit set by the
/// caller), and the references at the base (`base`: REV and its commit) of the manifests
/// holding secrets, read on a blocking thread.
pub(super) async fn review_of(
    loaded: &crate::manifest::Loaded,
    base: Option<(String, String)>,
) -> anyhow::Result<(Option<BaseRefs>, crate::plan::review::Review)> {
    use anyhow::Context;
    let wanted: Vec<(Address, PathBuf)> = loaded
        .manifests
        .iter()
        .filter(|m| !m.kind.def().secrets_in(&m.spec).is_empty())
        .map(|m| (m.address(), m.file.clone()))
        .collect();
    let mut review = crate::plan::review::Review {
        holds_secrets: !wanted.is_empty(),
        ..Default::default()
    };
    let Some((rev, commit)) = base else {
        return Ok((None, review));
    };
    let (r, c) = (rev.clone(), commit.clone());
    let refs = tokio::task::spawn_blocking(move || read_refs(&r, &c, &wanted))
        .await
        .context("reading the base")??;
    review.base = Some(crate::plan::review::Base { rev, commit });
    Ok((Some(refs), review))
}
