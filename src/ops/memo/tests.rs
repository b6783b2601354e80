use super::*;
use crate::api::registry::Address;
use crate::plan::GuardContext;

fn sources() -> Sources {
    Sources(vec![
        ("cfg/teams.yaml".into(), [1; 32]),
        ("cfg/buckets.yaml".into(), [2; 32]),
    ])
}

fn plan() -> Plan {
    Plan {
        target: "https://tenant.example.com".into(),
        actions: Vec::new(),
        unchanged: 42,
        unmanaged: vec![
            Unmanaged {
                address: Address::new(Kind::named("Bucket"), Some("stray".into())),
                in_prune_scope: true,
            },
            Unmanaged {
                address: Address::new(Kind::named("ResourcePools"), None),
                in_prune_scope: false,
            },
        ],
        orphaned: vec![],
        observed: vec![],
        warnings: vec!["the target lists a Team without a slug; skipped".into()],
        guard_violations: Vec::new(),
        guard: GuardContext {
            max_deletes: 7,
            prune: vec![Pattern::parse("Bucket/*").unwrap()],
            exclude: vec![Pattern::parse("Bucket/keep-*").unwrap()],
            declared: [Kind::named("Team"), Kind::named("Bucket")]
                .into_iter()
                .collect(),
            manage: vec![],
            seal: None,
            // Remembered with the plan: a recalled plan is its environment's.
            environment: Some("staging".into()),
        },
        review: Default::default(),
    }
}

fn known() -> BTreeSet<Kind> {
    [
        Kind::named("Team"),
        Kind::named("Bucket"),
        Kind::named("ResourcePools"),
    ]
    .into_iter()
    .collect()
}

fn inputs(s: &Sources) -> Inputs<'_> {
    Inputs {
        sources: s,
        target: "https://tenant.example.com",
        prune: false,
        only: &[],
        environment: None,
    }
}

#[test]
fn a_remembered_plan_comes_back_whole() {
    let dir = tempfile::tempdir().unwrap();
    let memo = Memo::open(dir.path(), Some("tok")).unwrap();
    let s = sources();
    let id = memo.id_of(&inputs(&s));
    assert!(memo.recall(&id).is_none());
    assert!(memo
        .remember(&id, Answers([9; 32]), &plan(), &known())
        .unwrap());
    let back = memo.recall(&id).expect("recalled");
    assert_eq!(back.answers, Answers([9; 32]));
    assert_eq!(back.known, known());
    let (mut got, want) = (back.plan, plan());
    // Patterns compare by their text.
    assert_eq!(
        format!("{:?}", got.guard.prune),
        format!("{:?}", want.guard.prune)
    );
    assert_eq!(
        format!("{:?}", got.guard.exclude),
        format!("{:?}", want.guard.exclude)
    );
    got.guard.prune = want.guard.prune.clone();
    got.guard.exclude = want.guard.exclude.clone();
    assert_eq!(got, want);
}

#[test]
fn only_a_folder_without_entries_remembers_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let memo = Memo::open(dir.path(), Some("tok")).unwrap();
    assert!(memo.remembers_nothing());
    // Files that are not entries (a temporary file, the key) do not count.
    std::fs::write(dir.path().join("plans").join(".x.tmp"), b"x").unwrap();
    assert!(memo.remembers_nothing());
    let s = sources();
    let id = memo.id_of(&inputs(&s));
    memo.remember(&id, Answers([9; 32]), &plan(), &known())
        .unwrap();
    assert!(!memo.remembers_nothing());
    // Another token's memo in the same folder: its entries may be anyone's, so not "nothing".
    let other = Memo::open(dir.path(), Some("other")).unwrap();
    assert!(!other.remembers_nothing());
}

#[test]
fn a_plan_with_something_to_do_is_not_remembered() {
    let dir = tempfile::tempdir().unwrap();
    let memo = Memo::open(dir.path(), None).unwrap();
    let s = sources();
    let id = memo.id_of(&inputs(&s));
    let mut p = plan();
    p.guard_violations.push(crate::plan::Guard::EmptyPrune {
        kind: Kind::named("Bucket"),
        count: 3,
    });
    assert!(!memo.remember(&id, Answers([9; 32]), &p, &known()).unwrap());
    assert!(memo.recall(&id).is_none());
}

#[test]
fn every_input_names_another_entry() {
    let dir = tempfile::tempdir().unwrap();
    let memo = Memo::open(dir.path(), Some("tok")).unwrap();
    let s = sources();
    let base = memo.id_of(&inputs(&s));
    let mut ids = vec![base];
    let mut edited = sources();
    edited.0[1].1[0] ^= 1;
    ids.push(memo.id_of(&inputs(&edited)));
    let mut renamed = sources();
    renamed.0[1].0 = "cfg/buckets2.yaml".into();
    ids.push(memo.id_of(&inputs(&renamed)));
    let mut fewer = sources();
    fewer.0.pop();
    ids.push(memo.id_of(&inputs(&fewer)));
    ids.push(memo.id_of(&Inputs {
        target: "https://other.example.com",
        ..inputs(&s)
    }));
    ids.push(memo.id_of(&Inputs {
        prune: true,
        ..inputs(&s)
    }));
    // Two environments on one URL: one entry each, and neither is the plan without one.
    for environment in ["staging", "prod"] {
        ids.push(memo.id_of(&Inputs {
            environment: Some(environment),
            ..inputs(&s)
        }));
    }
    let only = [Pattern::parse("Team/*").unwrap()];
    ids.push(memo.id_of(&Inputs {
        only: &only,
        ..inputs(&s)
    }));
    // Another token: another key.
    let other = Memo::open(dir.path(), Some("tok2")).unwrap();
    ids.push(other.id_of(&inputs(&s)));
    let distinct: BTreeSet<_> = ids.iter().collect();
    assert_eq!(distinct.len(), ids.len());
    // The same inputs, the same id.
    assert_eq!(memo.id_of(&inputs(&sources())), base);
}

#[test]
fn an_entry_that_does_not_verify_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let memo = Memo::open(dir.path(), Some("tok")).unwrap();
    let s = sources();
    let id = memo.id_of(&inputs(&s));
    memo.remember(&id, Answers([9; 32]), &plan(), &known())
        .unwrap();
    let path = dir.path().join("plans").join(hex(&id));
    let text = std::fs::read_to_string(&path).unwrap();
    // Someone without the token rewrites the body (another answers' hash, so that a changed
    // tenant looks unchanged): the tag no longer verifies.
    let forged = text.replace(&hex(&[9; 32]), &hex(&[8; 32]));
    assert_ne!(forged, text);
    std::fs::write(&path, &forged).unwrap();
    assert!(memo.recall(&id).is_none());
    // A tag made without the key does not verify either.
    let body = forged.splitn(3, '\n').nth(2).unwrap();
    let unkeyed = format!(
        "cfgctl plan cache entry\n{}\n{body}",
        blake3::hash(body.as_bytes()).to_hex()
    );
    std::fs::write(&path, unkeyed).unwrap();
    assert!(memo.recall(&id).is_none());
    // Under another token, the genuine entry does not verify.
    std::fs::write(&path, &text).unwrap();
    assert!(memo.recall(&id).is_some());
    let other = Memo::open(dir.path(), Some("tok2")).unwrap();
    assert!(other.recall(&id).is_none());
    // Truncated, empty, not UTF-8: refused, never a panic.
    for bad in [&text.as_bytes()[..40], b"", b"\xff\xfe\n{}"] {
        std::fs::write(&path, bad).unwrap();
        assert!(memo.recall(&id).is_none());
    }
}

#[test]
fn the_token_is_never_written() {
    let dir = tempfile::tempdir().unwrap();
    let token = "s3cr3t-token-value-1234567890";
    let memo = Memo::open(dir.path(), Some(token)).unwrap();
    assert!(!format!("{memo:?}").contains(token));
    let s = sources();
    let id = memo.id_of(&inputs(&s));
    memo.remember(&id, Answers([9; 32]), &plan(), &known())
        .unwrap();
    for entry in walkdir::WalkDir::new(dir.path()) {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().to_string();
        assert!(!name.contains(token));
        if entry.file_type().is_file() {
            let bytes = std::fs::read(entry.path()).unwrap();
            assert!(!String::from_utf8_lossy(&bytes).contains(token));
        }
    }
}

#[cfg(unix)]
#[test]
fn a_directory_others_may_write_is_not_used() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let memo = Memo::open(dir.path(), None).unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dir.path().join("plans")), 0o700);
    let s = sources();
    let id = memo.id_of(&inputs(&s));
    memo.remember(&id, Answers([9; 32]), &plan(), &known())
        .unwrap();
    assert_eq!(mode(&dir.path().join("plans").join(hex(&id))), 0o600);
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let err = Memo::open(dir.path(), None).unwrap_err().to_string();
    assert!(err.contains("others may write"), "{err}");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::set_permissions(
        dir.path().join("plans"),
        std::fs::Permissions::from_mode(0o770),
    )
    .unwrap();
    assert!(Memo::open(dir.path(), None).is_err());
    // A symlink in the entries' place is not followed.
    std::fs::remove_dir_all(dir.path().join("plans")).unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), dir.path().join("plans")).unwrap();
    assert!(Memo::open(dir.path(), None).is_err());
}

#[test]
fn old_entries_are_trimmed() {
    let dir = tempfile::tempdir().unwrap();
    let memo = Memo::open(dir.path(), None).unwrap();
    for i in 0..KEEP + 3 {
        let s = Sources(vec![(
            "a.yaml".into(),
            [u8::try_from(i % 256).unwrap(); 32],
        )]);
        let mut s = s;
        s.0.push((format!("{i}.yaml").into(), [0; 32]));
        let id = memo.id_of(&inputs(&s));
        memo.remember(&id, Answers([1; 32]), &plan(), &known())
            .unwrap();
    }
    let count = std::fs::read_dir(dir.path().join("plans")).unwrap().count();
    assert_eq!(count, KEEP);
}

/// An entry as cfgctl writes it, tagged under `key`.
fn entry_text(key: &[u8; 32], id: &[u8; 32], body: &[u8]) -> Vec<u8> {
    let mut h = blake3::Hasher::new_keyed(key);
    field(&mut h, b"body");
    h.update(id);
    field(&mut h, body);
    let mut text = folder::HEADER.to_vec();
    text.extend_from_slice(h.finalize().to_hex().as_bytes());
    text.push(b'\n');
    text.extend_from_slice(body);
    text
}

#[test]
fn a_folder_of_another_user_is_not_used() {
    let dir = tempfile::tempdir().unwrap();
    let me = folder::current_user();
    let err = Memo::open_as(dir.path(), None, me.wrapping_add(1))
        .unwrap_err()
        .to_string();
    assert!(err.contains("not to this user"), "{err}");
    assert!(Memo::open_as(dir.path(), None, me).is_ok());
}

#[test]
fn without_a_token_an_entry_is_keyed_by_the_users_secret() {
    let dir = tempfile::tempdir().unwrap();
    let memo = Memo::open(dir.path(), None).unwrap();
    let s = sources();
    let id = memo.id_of(&inputs(&s));
    memo.remember(&id, Answers([9; 32]), &plan(), &known())
        .unwrap();
    let path = dir.path().join("plans").join(hex(&id));
    let genuine = std::fs::read(&path).unwrap();
    let body = &genuine[folder::HEADER.len() + 65..];
    // The key every token-less target used to share, and the same with any other secret.
    for key in [
        blake3::derive_key(
            "cfgctl 2026-11-23 no-change memo: target without a token",
            b"",
        ),
        blake3::derive_key(KEY_CONTEXT, &[0; 32]),
    ] {
        std::fs::write(&path, entry_text(&key, &id, body)).unwrap();
        assert!(memo.recall(&id).is_none());
    }
    // Another user's folder (another secret) does not accept this user's entry.
    let other_dir = tempfile::tempdir().unwrap();
    let other = Memo::open(other_dir.path(), None).unwrap();
    std::fs::create_dir_all(other_dir.path().join("plans")).unwrap();
    std::fs::write(other_dir.path().join("plans").join(hex(&id)), &genuine).unwrap();
    assert!(other.recall(&id).is_none());
    std::fs::write(&path, &genuine).unwrap();
    assert!(memo.recall(&id).is_some());
    // The secret is private and stays the same from one run to the next.
    use std::os::unix::fs::PermissionsExt;
    let key_meta = std::fs::metadata(dir.path().join("key")).unwrap();
    assert_eq!(key_meta.permissions().mode() & 0o777, 0o600);
    assert_eq!(key_meta.len(), 32);
    let again = Memo::open(dir.path(), None).unwrap();
    assert!(again.recall(&id).is_some());
}

#[test]
fn a_fifo_in_an_entrys_place_is_not_waited_for() {
    let dir = tempfile::tempdir().unwrap();
    let memo = Memo::open(dir.path(), None).unwrap();
    let s = sources();
    let id = memo.id_of(&inputs(&s));
    let path = dir.path().join("plans").join(hex(&id));
    let made = std::process::Command::new("mkfifo")
        .arg(&path)
        .status()
        .unwrap();
    assert!(made.success());
    // Opened non-blocking and refused as not a regular file (a blocking open would hang here).
    assert!(memo.recall(&id).is_none());
    // A symlink to a genuine entry is not followed either.
    std::fs::remove_file(&path).unwrap();
    let real = tempfile::tempdir().unwrap();
    let memo2 = Memo::open(real.path(), None).unwrap();
    memo2
        .remember(&id, Answers([9; 32]), &plan(), &known())
        .unwrap();
    std::os::unix::fs::symlink(real.path().join("plans").join(hex(&id)), &path).unwrap();
    assert!(memo.recall(&id).is_none());
}

#[test]
fn the_trim_removes_only_cfgctls_entries() {
    let dir = tempfile::tempdir().unwrap();
    let memo = Memo::open(dir.path(), None).unwrap();
    let plans = dir.path().join("plans");
    // Files cfgctl did not write: other names, and entry names without the header.
    let mut strangers = Vec::new();
    for i in 0..KEEP + 10 {
        let name = if i % 2 == 0 {
            format!("notes-{i}.txt")
        } else {
            format!("{:064x}", i)
        };
        std::fs::write(plans.join(&name), b"not an entry").unwrap();
        strangers.push(name);
    }
    for i in 0..KEEP + 3 {
        let s = Sources(vec![(format!("{i}.yaml").into(), [3; 32])]);
        let id = memo.id_of(&inputs(&s));
        memo.remember(&id, Answers([1; 32]), &plan(), &known())
            .unwrap();
    }
    for name in &strangers {
        assert!(plans.join(name).exists(), "{name} was deleted");
    }
    let count = std::fs::read_dir(&plans).unwrap().count();
    assert_eq!(count, KEEP + strangers.len());
}

#[test]
fn a_folder_swapped_for_a_symlink_after_opening_is_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let memo = Memo::open(dir.path(), None).unwrap();
    let plans = dir.path().join("plans");
    // Full of entries, so the next write trims.
    for i in 0..KEEP {
        let s = Sources(vec![(format!("{i}.yaml").into(), [4; 32])]);
        let id = memo.id_of(&inputs(&s));
        memo.remember(&id, Answers([1; 32]), &plan(), &known())
            .unwrap();
    }
    // Someone moves the folder away and points its name at files of the victim, entries
    // included (their names and header are all the trim could check).
    let victim = tempfile::tempdir().unwrap();
    std::fs::rename(&plans, dir.path().join("moved")).unwrap();
    for entry in std::fs::read_dir(dir.path().join("moved")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), victim.path().join(entry.file_name())).unwrap();
    }
    std::os::unix::fs::symlink(victim.path(), &plans).unwrap();
    let before = std::fs::read_dir(victim.path()).unwrap().count();
    let s = Sources(vec![("new.yaml".into(), [5; 32])]);
    let id = memo.id_of(&inputs(&s));
    memo.remember(&id, Answers([1; 32]), &plan(), &known())
        .unwrap();
    // The write and the trim happened in the folder that was opened, not through the link.
    assert_eq!(std::fs::read_dir(victim.path()).unwrap().count(), before);
    assert!(dir.path().join("moved").join(hex(&id)).exists());
    assert_eq!(
        std::fs::read_dir(dir.path().join("moved")).unwrap().count(),
        KEEP
    );
}
