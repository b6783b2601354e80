//! `--base REV` (docs/product.md §6): the secret references of the manifests as they were at a
//! git revision, read with the `git` command (no git library: the one a CI runner has, with its
//! credentials and its shallow-clone rules): REV's files under DIR are written to a temporary
//! directory and loaded with the working tree's loader and environment, so the references are
//! the effective ones (overlay, variables), by address. A secret field whose reference differs between REV
//! and the working tree is an update that sends the new value: the ops layer hands the
//! references of REV to `secrets::stand_in`, which puts them where the target answered
//! `**REDACTED**`, so the pure planner sees the change as any other.
//!
//! Also the commit a plan is made from (`git rev-parse HEAD`), named in the plan.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub use crate::plan::secrets::BaseRefs;

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
        .stdin(Stdio::null())
        .output()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).trim().to_string()
}

/// Whether `git status --porcelain -- .` in `dir` lists anything: the working tree under
/// `dir` differs from its commit (what a plan says next to the commit it names).
pub fn uncommitted_changes(dir: &Path) -> bool {
    git(dir, &["status", "--porcelain", "--", "."])
        .map(|out| out.status.success() && !out.stdout.iter().all(u8::is_ascii_whitespace))
        .unwrap_or(false)
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

/// The secret references at `commit` of every manifest under `dir`, by address (a manifest
/// without one has an empty entry): REV's files under `dir` are written to a private temporary
/// directory and loaded there with the same loader, for the same environment (REV's overlay
/// and REV's `cfgctl.yaml` variables), so a reference is compared as it is in effect, whatever
/// file declares it. A base that does not load (an environment REV does not declare) declares
/// nothing; REV's manifests are only compared with, never checked.
pub fn read_refs(
    dir: &Path,
    rev: &str,
    commit: &str,
    environment: Option<&str>,
) -> Result<BaseRefs, BaseError> {
    let tree = materialise(dir, rev, commit)?;
    let mut refs = BaseRefs::default();
    let Ok(loaded) = crate::manifest::load_dir_for(&tree.root, environment) else {
        return Ok(refs);
    };
    for m in &loaded.manifests {
        let found: BTreeMap<String, String> = m
            .kind
            .def()
            .secrets_in(&m.spec)
            .into_iter()
            .map(|f| {
                // A literal (allowed) is kept by its hash alone, never its text (red team D20:
                // a literal replaced by a reference is the rotation after a leak).
                let value = match crate::plan::secrets::parse(&f.value) {
                    Some(_) => f.value,
                    None => {
                        crate::util::output::register_secret(&f.value);
                        crate::plan::secrets::literal_mark(&f.value)
                    }
                };
                (f.pointer, value)
            })
            .collect();
        refs.0.entry(m.address()).or_default().extend(found);
    }
    Ok(refs)
}

/// A temporary directory holding a revision's files, removed when dropped.
struct Tree {
    root: PathBuf,
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// The files under `dir` at `commit` (read by one `git ls-tree` and one `git cat-file
/// --batch`), written under a new directory only this user may read, at their paths under
/// `dir`.
fn materialise(dir: &Path, rev: &str, commit: &str) -> Result<Tree, BaseError> {
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let io = |file: &Path, e: std::io::Error| BaseError::Read {
        rev: rev.into(),
        file: file.to_path_buf(),
        detail: e.to_string(),
    };
    let prefix = git(dir, &["rev-parse", "--show-prefix"]).map_err(|source| BaseError::NoGit {
        rev: rev.into(),
        source,
    })?;
    let prefix = text(&prefix.stdout);
    let names = names_under(dir, rev, commit)?;
    let objects: Vec<String> = names.iter().map(|n| format!("{commit}:{n}")).collect();
    let texts = cat_files(dir, rev, &objects)?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let root =
        std::env::temp_dir().join(format!("cfgctl-base-{}-{nanos}-{seq}", std::process::id()));
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(&root).map_err(|e| io(&root, e))?;
    let tree = Tree { root };
    for (name, text) in names.iter().zip(texts) {
        let (Some(rel), Some(text)) = (name.strip_prefix(prefix.as_str()), text) else {
            continue;
        };
        let path = tree.root.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
        }
        std::fs::write(&path, text).map_err(|e| io(&path, e))?;
    }
    Ok(tree)
}

/// The paths (from the repository's root) of the files under `dir` at `commit`.
fn names_under(dir: &Path, rev: &str, commit: &str) -> Result<Vec<String>, BaseError> {
    let listed = git(
        dir,
        &[
            "ls-tree",
            "-r",
            "-z",
            "--full-name",
            "--name-only",
            commit,
            "--",
            ".",
        ],
    )
    .map_err(|source| BaseError::NoGit {
        rev: rev.into(),
        source,
    })?;
    if !listed.status.success() {
        return Err(BaseError::Read {
            rev: rev.into(),
            file: dir.to_path_buf(),
            detail: text(&listed.stderr),
        });
    }
    Ok(listed
        .stdout
        .split(|b| *b == 0)
        .filter_map(|name| std::str::from_utf8(name).ok())
        .filter(|n| !n.is_empty())
        .map(str::to_string)
        .collect())
}

/// The text of each object (`COMMIT:PATH`) by one `git cat-file --batch` in `dir`, in order;
/// `None` for one that does not exist (or is not UTF-8 text).
fn cat_files(dir: &Path, rev: &str, objects: &[String]) -> Result<Vec<Option<String>>, BaseError> {
    use std::io::Write as _;
    if objects.is_empty() {
        return Ok(Vec::new());
    }
    let no_git = |source| BaseError::NoGit {
        rev: rev.into(),
        source,
    };
    let input: String = objects.iter().map(|o| format!("{o}\n")).collect();
    let mut child = Command::new("git")
        .arg("-C")
        .arg(if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        })
        .args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(no_git)?;
    // Written on its own thread: git answers while it reads, and a full pipe would stop both.
    let stdin = child.stdin.take();
    let writer = std::thread::spawn(move || {
        if let Some(mut stdin) = stdin {
            let _ = stdin.write_all(input.as_bytes());
        }
    });
    let out = child.wait_with_output().map_err(no_git)?;
    let _ = writer.join();
    if !out.status.success() {
        return Err(BaseError::Read {
            rev: rev.into(),
            file: dir.to_path_buf(),
            detail: text(&out.stderr),
        });
    }
    Ok(batch_objects(&out.stdout, objects.len()))
}

/// The objects of `git cat-file --batch`'s answer, one per object asked for (`OID TYPE
/// SIZE\n`, SIZE bytes and a line feed; `NAME missing\n` or `NAME ambiguous\n` for none), as
/// text; `None` where there is none (or it is not UTF-8).
fn batch_objects(mut out: &[u8], asked: usize) -> Vec<Option<String>> {
    let mut objects = Vec::with_capacity(asked);
    while let Some(end) = out.iter().position(|b| *b == b'\n') {
        let header = String::from_utf8_lossy(&out[..end]).to_string();
        out = &out[end + 1..];
        let fields: Vec<&str> = header.split(' ').collect();
        let size = match fields.as_slice() {
            [_, _, size] => size.parse::<usize>().ok(),
            _ => None,
        };
        let Some(size) = size else {
            objects.push(None);
            continue;
        };
        let Some(body) = out.get(..size) else {
            break;
        };
        objects.push(std::str::from_utf8(body).ok().map(str::to_string));
        out = out.get(size + 1..).unwrap_or_default();
    }
    objects.resize(asked, None);
    objects
}

/// What the plan records of how it was compared (`plan::review::Review`, its commit set by the
/// caller), and the references at the base (`base`: REV and its commit) of the manifests
/// holding secrets, read on a blocking thread.
pub(super) async fn review_of(
    loaded: &crate::manifest::Loaded,
    dir: &Path,
    current: &crate::plan::Current,
    base: Option<(String, String)>,
) -> anyhow::Result<(Option<BaseRefs>, crate::plan::review::Review)> {
    use anyhow::Context;
    let holding: Vec<&crate::manifest::Manifest> = loaded
        .manifests
        .iter()
        .filter(|m| !m.kind.def().secrets_in(&m.spec).is_empty())
        .collect();
    let mut review = crate::plan::review::Review {
        holds_secrets: !holding.is_empty(),
        ..Default::default()
    };
    let Some((rev, commit)) = base else {
        return Ok((None, review));
    };
    let (r, c, d) = (rev.clone(), commit.clone(), dir.to_path_buf());
    let env = loaded.environment.clone();
    let refs = tokio::task::spawn_blocking(move || read_refs(&d, &r, &c, env.as_deref()))
        .await
        .context("reading the base")??;
    // Only what the target has is compared: a create sends its secrets anyway.
    let mut not_at_base: Vec<String> = holding
        .iter()
        .map(|m| m.address())
        .filter(|a| current.resources.contains_key(a) && !refs.0.contains_key(a))
        .map(|a| a.to_string())
        .collect();
    not_at_base.sort();
    not_at_base.dedup();
    review.not_at_base = not_at_base;
    review.base = Some(crate::plan::review::Base { rev, commit });
    Ok((Some(refs), review))
}

#[cfg(test)]
mod tests {
    use super::batch_objects;

    #[test]
    fn a_batch_answer_is_read_object_by_object() {
        let answer = b"1111 blob 5\nabc\n\n\nHEAD:gone.yaml missing\n2222 blob 3\nxyz\n3333 blob 2\n\xff\xfe\n";
        let some = |s: &str| Some(s.to_string());
        assert_eq!(
            batch_objects(answer, 4),
            [some("abc\n\n"), None, some("xyz"), None]
        );
        // A cut answer gives what it holds whole, the rest none.
        assert_eq!(batch_objects(b"1111 blob 10\nabc", 2), [None, None]);
    }
}
