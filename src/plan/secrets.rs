//! Secrets in manifests (docs/product.md §2): `${env:NAME}` / `${file:PATH}` references in
//! the registry's secret fields, resolved only where a value must reach the target. (Outside
//! secret fields the same forms are plain configuration, resolved at load: `manifest::vars`.)
//!
//! One layer: a value is registered with [`crate::util::output::register_secret`] the moment it is
//! resolved (or arrives from a target), so no printed line can carry it. Everything that is
//! kept or written (the plan, a saved plan, the memo, an export or a pull) holds the reference
//! text, never the value: the manifests' specs keep their references, the current objects get
//! them in place of what the target answered ([`stand_in`]), and only the bodies sent are
//! filled ([`fill_plan`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::api::registry::{Address, Kind, REDACTED};
use crate::manifest::Manifest;
use crate::plan::{Action, ActionKind, Current, Plan};

pub use crate::api::registry::{parse_reference as parse, SecretRef, CHANGED, SHOWN};

/// A secret reference that could not be resolved: named, never its value.
#[derive(Debug, thiserror::Error)]
#[error("{}:{line}: {address} `{field}`: {reason}", file.display())]
pub struct SecretError {
    pub file: PathBuf,
    pub line: u32,
    pub address: String,
    pub field: String,
    pub reason: String,
}

/// The value of a reference; `base` is the manifest's file (a `${file:…}` is relative to its
/// folder). The value is registered as a secret before it is returned; an empty value is an
/// error, as an unset one.
pub fn resolve(reference: SecretRef<'_>, base: &Path) -> Result<String, String> {
    resolve_in(reference, base, None)
}

/// [`resolve`], a `${file:…}` confined to `scope` when given (a saved plan's references, which
/// no load checked here: `saved_plan_scope`).
pub fn resolve_in(
    reference: SecretRef<'_>,
    base: &Path,
    scope: Option<&crate::util::file_ref::FileScope>,
) -> Result<String, String> {
    if let (SecretRef::File(path), Some(scope)) = (reference, scope) {
        let value = scope
            .resolve(base, path, true)
            .and_then(|full| crate::util::file_ref::read(&full))
            .map(crate::util::file_ref::value_of)
            .map_err(|e| format!("cannot read secret file: {e}"))?;
        crate::util::output::register_secret(&value);
        return Ok(value);
    }
    let value = match reference {
        SecretRef::Env(name) => match std::env::var(name) {
            Ok(v) => v,
            Err(std::env::VarError::NotPresent) => {
                return Err(format!("environment variable {name} is not set"))
            }
            Err(std::env::VarError::NotUnicode(_)) => {
                return Err(format!("environment variable {name} is not valid UTF-8"))
            }
        },
        SecretRef::File(path) => {
            // Where it points was checked at load (inside the repository, or a directory
            // `secrets.file_dirs` allows); what is read is a regular file of bounded size.
            let full = base.parent().unwrap_or(Path::new("")).join(path);
            std::fs::canonicalize(&full)
                .map_err(|e| format!("{}: {e}", full.display()))
                .and_then(|full| crate::util::file_ref::read(&full))
                .map(crate::util::file_ref::value_of)
                .map_err(|e| format!("cannot read secret file: {e}"))?
        }
    };
    // An empty value is what CI makes of an undefined secret (GitHub Actions' `${{ secrets.X }}`):
    // never sent over a working one.
    if value.is_empty() {
        return Err(match reference {
            SecretRef::Env(name) => format!("environment variable {name} is empty"),
            SecretRef::File(path) => format!("secret file {path} is empty"),
        });
    }
    crate::util::output::register_secret(&value);
    Ok(value)
}

/// The object with every secret reference replaced by its value (`None` when it holds none).
pub fn fill(
    kind: Kind,
    object: &Value,
    file: &Path,
    line: u32,
    address: &Address,
) -> Result<Option<Value>, SecretError> {
    fill_in(kind, object, (file, line), address, None)
}

/// [`fill`], `${file:…}` confined to `scope` when given.
fn fill_in(
    kind: Kind,
    object: &Value,
    (file, line): (&Path, u32),
    address: &Address,
    scope: Option<&crate::util::file_ref::FileScope>,
) -> Result<Option<Value>, SecretError> {
    let found = kind.def().secrets_in(object);
    let mut filled: Option<Value> = None;
    for f in found {
        let Some(reference) = parse(&f.value) else {
            continue;
        };
        let value = resolve_in(reference, file, scope).map_err(|reason| SecretError {
            file: file.to_path_buf(),
            line,
            address: address.to_string(),
            field: f.path.clone(),
            reason,
        })?;
        let target = filled.get_or_insert_with(|| object.clone());
        if let Some(slot) = target.pointer_mut(&f.pointer) {
            *slot = Value::String(value);
        }
    }
    Ok(filled)
}

/// The plan as it is sent, when it differs from the plan (`None`: it sends no secret field):
/// every body's references resolved (the plan itself keeps them, for
/// what is shown and saved). Fails, before anything is sent, on the first reference that
/// cannot be resolved.
pub fn fill_plan(plan: &Plan) -> Result<Option<Plan>, SecretError> {
    fill_plan_in(plan, None)
}

/// Where a saved plan's `${file:…}` secrets may be read (red team D23): a saved plan is an
/// artifact another job wrote, so its references are held to the checkout it is applied in,
/// as a load would hold them: inside the current directory, or under a directory that a
/// `cfgctl.yaml` of that checkout (beside a step's manifest or above it) allows for secrets.
pub fn saved_plan_scope(plan: &Plan) -> crate::util::file_ref::FileScope {
    let here = Path::new(".");
    let mut dirs: Vec<PathBuf> = Vec::new();
    let folders: std::collections::BTreeSet<PathBuf> = plan
        .actions
        .iter()
        .filter_map(|a| a.source.as_ref()?.file.parent().map(Path::to_path_buf))
        .collect();
    for folder in folders {
        for dir in folder.ancestors() {
            let file = if dir.as_os_str().is_empty() {
                here.join(crate::config::settings::FILE_NAME)
            } else {
                dir.join(crate::config::settings::FILE_NAME)
            };
            let Ok(text) = std::fs::read_to_string(&file) else {
                continue;
            };
            if let Ok(settings) = crate::config::settings::parse(&file, &text) {
                let base = file.parent().unwrap_or(here);
                dirs.extend(settings.secret_file_dirs.iter().map(|d| base.join(d)));
            }
        }
    }
    crate::util::file_ref::FileScope::of_dir(here, &dirs)
}

/// [`fill_plan`], `${file:…}` confined to `scope` when given.
pub fn fill_plan_in(
    plan: &Plan,
    scope: Option<&crate::util::file_ref::FileScope>,
) -> Result<Option<Plan>, SecretError> {
    // Most plans send no secret: then the plan itself is what is sent, not a copy of it.
    let sends_secrets = plan
        .actions
        .iter()
        .any(|a| a.body.is_some() && !a.address.kind.def().secrets.is_empty());
    if !sends_secrets {
        return Ok(None);
    }
    let mut sent = plan.clone();
    for action in &mut sent.actions {
        let (Some(body), Some(source)) = (&action.body, &action.source) else {
            continue;
        };
        let kind = action.address.kind;
        let at = (source.file.as_path(), source.line);
        if let Some(filled) = fill_in(kind, body, at, &action.address, scope)? {
            action.body = Some(Arc::new(filled));
        }
    }
    Ok(Some(sent))
}

mod base;
use base::base_stand_in;
pub use base::{literal_mark, BaseRefs, LITERAL_AT_BASE};

/// A secret a plan sends whose reference cannot be resolved now.
#[derive(Debug)]
pub struct Unresolved {
    pub address: Address,
    /// JSON pointer of the field inside the spec.
    pub pointer: String,
    /// Dotted path of the field.
    pub path: String,
    pub reference: String,
    pub reason: String,
}

/// Every secret the plan's bodies send whose reference cannot be resolved (an unset variable,
/// an unreadable file), in plan order: `plan` reports them at their field, so a pull request
/// is not green for what fails on merge. A secret that is not sent (no body) needs nothing.
/// Each value resolved is registered as a secret, and dropped.
pub fn unresolved(plan: &Plan) -> Vec<Unresolved> {
    let mut out = Vec::new();
    for action in &plan.actions {
        let (Some(body), Some(source)) = (&action.body, &action.source) else {
            continue;
        };
        for f in action.address.kind.def().secrets_in(body) {
            let Some(reference) = parse(&f.value) else {
                continue;
            };
            if let Err(reason) = resolve(reference, &source.file) {
                out.push(Unresolved {
                    address: action.address.clone(),
                    pointer: f.pointer,
                    path: f.path,
                    reference: f.value.clone(),
                    reason,
                });
            }
        }
    }
    out
}

/// Puts the manifests' references in place of the secrets the target answered, so the plan
/// compares references and holds no value: `**REDACTED**` is what the manifest set (a target
/// that redacts cannot show a diff); a value in clear is compared with the resolved reference
/// and stands as the reference when equal, else as [`CHANGED`]. True when some target answered
/// a secret in clear (a plan made so depends on the resolved values, which no memo key holds).
///
/// With `base` (`--base REV`), a `**REDACTED**` secret whose reference differs at REV stands
/// as REV's reference: the plan then updates it, both references shown.
pub fn stand_in(
    manifests: &[Manifest],
    current: &mut Current,
    base: Option<&BaseRefs>,
) -> Result<bool, SecretError> {
    // Only the kinds with secrets are looked up: not an address of every manifest copied.
    let by_address: BTreeMap<Address, &Manifest> = manifests
        .iter()
        .filter(|m| !m.kind.def().secrets.is_empty())
        .map(|m| (m.address(), m))
        .collect();
    let mut in_clear = false;
    let mut replaced = Vec::new();
    for (address, object) in &current.resources {
        let def = address.kind.def();
        if def.secrets.is_empty() {
            continue;
        }
        let mut value = object.value();
        let found = def.secrets_in(&value);
        if found.is_empty() {
            continue;
        }
        let manifest = by_address.get(address);
        for f in found {
            let desired = manifest
                .and_then(|m| m.spec.pointer(&f.pointer))
                .and_then(Value::as_str);
            let stand = if f.value == REDACTED {
                match (desired, base.and_then(|b| b.get(address, &f.pointer))) {
                    (Some(d), Some(was)) => base_stand_in(was, d),
                    (Some(d), None) => d.to_string(),
                    (None, _) => continue,
                }
            } else {
                in_clear = true;
                crate::util::output::register_secret(&f.value);
                match (desired, manifest) {
                    (Some(d), Some(m)) => {
                        let wanted = match parse(d) {
                            Some(r) => resolve(r, &m.file).map_err(|reason| SecretError {
                                file: m.file.clone(),
                                line: m.pos.line,
                                address: address.to_string(),
                                field: f.path.clone(),
                                reason,
                            })?,
                            None => d.to_string(),
                        };
                        if wanted == f.value {
                            d.to_string()
                        } else {
                            CHANGED.to_string()
                        }
                    }
                    _ => CHANGED.to_string(),
                }
            };
            if let Some(slot) = value.pointer_mut(&f.pointer) {
                *slot = Value::String(stand);
            }
        }
        replaced.push((address.clone(), value));
    }
    for (address, value) in replaced {
        current.insert(address, &value);
    }
    Ok(in_clear)
}

/// Whether the target answered some secret in clear (neither `**REDACTED**` nor a reference).
pub fn answered_in_clear(current: &Current) -> bool {
    current.resources.iter().any(|(address, object)| {
        let def = address.kind.def();
        !def.secrets.is_empty()
            && def
                .secrets_in(&object.value())
                .iter()
                .any(|f| f.value != REDACTED && parse(&f.value).is_none())
    })
}

/// `apply --rotate-secrets`: an update for every managed resource with a secret field (matching
/// one of `patterns`; all when empty) that the plan does not change already, so the secrets are
/// sent even when nothing shows a difference.
pub fn add_rotations(
    plan: &mut Plan,
    manifests: &[Manifest],
    current: &Current,
    patterns: &[crate::config::pattern::Pattern],
) {
    let planned: std::collections::BTreeSet<Address> =
        plan.actions.iter().map(|a| a.address.clone()).collect();
    for m in manifests {
        let address = m.address();
        let secrets = m.kind.def().secrets_in(&m.spec);
        if secrets.is_empty()
            || planned.contains(&address)
            || !(patterns.is_empty() || patterns.iter().any(|p| p.matches(&address)))
        {
            continue;
        }
        let Some(cur) = current.resources.get(&address) else {
            continue;
        };
        let cur = cur.value();
        let mut body = Value::clone(&m.spec);
        crate::plan::newer::carry_over(m.kind, &cur, &mut body);
        plan.actions.push(Action {
            address,
            action: ActionKind::Update,
            source: Some(crate::plan::Source {
                file: m.file.clone(),
                line: m.pos.line,
            }),
            fields: secrets
                .into_iter()
                .map(|s| crate::plan::normalize::FieldChange {
                    path: s.path,
                    before: Some(Value::String(SHOWN.into())),
                    after: Some(Value::String(SHOWN.into())),
                })
                .collect(),
            depends_on: vec![],
            reason: Some("--rotate-secrets: the secrets are sent again".into()),
            body: Some(Arc::new(body)),
            intended: None,
            fingerprint: Some(crate::plan::normalize::fingerprint(m.kind, &cur)),
            cascade: vec![],
        });
    }
}

/// ServiceAccount tokens (read-only secret fields) answered by the creates of this process,
/// by address: kept for `apply --service-account-tokens`, never printed (each is registered
/// as a secret as it arrives).
static CREATED: Mutex<BTreeMap<String, String>> = Mutex::new(BTreeMap::new());

/// Keeps the server-owned secrets of a create's answer (registered at once).
pub fn keep_created(kind: Kind, address: &Address, answer: &Value) {
    let def = kind.def();
    for f in def.secrets_in(answer) {
        if f.value == REDACTED || !def.server_owned.contains(&f.field) {
            continue;
        }
        crate::util::output::register_secret(&f.value);
        let mut created = CREATED.lock().unwrap_or_else(|e| e.into_inner());
        created.insert(address.to_string(), f.value);
        save_tokens(&created);
    }
}

/// Whether a kind has server-owned secrets (its create's answer is read for them).
pub fn answers_secrets(kind: Kind) -> bool {
    let def = kind.def();
    def.secrets.iter().any(|s| def.server_owned.contains(s))
}

/// The tokens kept so far.
pub fn created() -> BTreeMap<String, String> {
    CREATED.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// The file `apply --service-account-tokens` keeps the created tokens in: created (new, mode
/// 0600) before anything is sent, and written again after each create that answers a token, so
/// a token is on disk the moment it exists and a file that cannot be made stops the run before
/// a ServiceAccount is created.
struct TokenFile {
    path: std::path::PathBuf,
    file: std::fs::File,
    /// Why the last write failed, if it did (the final write tries again, then elsewhere).
    failed: Option<String>,
}

static TOKEN_FILE: Mutex<Option<TokenFile>> = Mutex::new(None);

/// Creates the tokens file: a new file (never an existing one, never through a symlink), mode
/// 0600, holding `{}` until a token arrives.
pub fn open_token_file(path: &Path) -> std::io::Result<()> {
    let mut file = new_private_file(path)?;
    write_map(&mut file, &BTreeMap::new())?;
    *TOKEN_FILE.lock().unwrap_or_else(|e| e.into_inner()) = Some(TokenFile {
        path: path.to_path_buf(),
        file,
        failed: None,
    });
    Ok(())
}

fn new_private_file(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

fn write_map(file: &mut std::fs::File, tokens: &BTreeMap<String, String>) -> std::io::Result<()> {
    use std::io::{Seek, Write};
    let text = serde_json::to_string_pretty(tokens).map_err(std::io::Error::other)?;
    file.set_len(0)?;
    file.rewind()?;
    file.write_all(text.as_bytes())?;
    file.write_all(b"\n")?;
    file.sync_all()
}

/// Writes the tokens kept so far into the tokens file, if one is open.
fn save_tokens(tokens: &BTreeMap<String, String>) {
    let mut open = TOKEN_FILE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(t) = open.as_mut() {
        t.failed = write_map(&mut t.file, tokens).err().map(|e| e.to_string());
    }
}

/// Why the created tokens are not all in the file that was asked for.
#[derive(Debug, thiserror::Error)]
pub enum TokenFileError {
    #[error("the service account tokens could not be written to {} ({reason}); they were written to {} instead (mode 0600): move them somewhere safe", .path.display(), .fallback.display())]
    Elsewhere {
        path: std::path::PathBuf,
        reason: String,
        fallback: std::path::PathBuf,
    },
    #[error("the service account tokens of {} could not be written to {} ({reason}) nor to {} ({fallback_reason}): they are lost; delete and create those service accounts again to get new tokens", .addresses.join(", "), .path.display(), .fallback.display())]
    Lost {
        addresses: Vec<String>,
        path: std::path::PathBuf,
        reason: String,
        fallback: std::path::PathBuf,
        fallback_reason: String,
    },
}

/// Closes the tokens file after the run: written a last time; when that fails, the tokens go
/// to a new file in the temporary directory, and the error says where (or, when that fails
/// too, which tokens are lost). A run that failed before any token was created leaves no file
/// behind (`succeeded` false), so the same command can run again.
pub fn close_token_file(succeeded: bool) -> Result<(), TokenFileError> {
    let Some(mut t) = TOKEN_FILE.lock().unwrap_or_else(|e| e.into_inner()).take() else {
        return Ok(());
    };
    let tokens = created();
    if tokens.is_empty() && !succeeded {
        drop(t.file);
        let _ = std::fs::remove_file(&t.path);
        return Ok(());
    }
    let reason = match write_map(&mut t.file, &tokens) {
        Ok(()) => return Ok(()),
        Err(e) => t.failed.take().unwrap_or_else(|| e.to_string()),
    };
    let fallback = std::env::temp_dir().join(format!(
        "cfgctl-service-account-tokens-{}.json",
        std::process::id()
    ));
    match new_private_file(&fallback).and_then(|mut f| write_map(&mut f, &tokens)) {
        Ok(()) => Err(TokenFileError::Elsewhere {
            path: t.path,
            reason,
            fallback,
        }),
        Err(e) => Err(TokenFileError::Lost {
            addresses: tokens.into_keys().collect(),
            path: t.path,
            reason,
            fallback,
            fallback_reason: e.to_string(),
        }),
    }
}

mod names;
pub use names::{env_variables, references_for_export, variable_for};

#[cfg(test)]
mod tests;
