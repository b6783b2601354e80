use super::*;
use crate::plan::GuardContext;
use crate::registry::Address;

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
                address: Address::new(Kind::Bucket, Some("stray".into())),
                in_prune_scope: true,
            },
            Unmanaged {
                address: Address::new(Kind::ResourcePools, None),
                in_prune_scope: false,
            },
        ],
        warnings: vec!["the target lists a Team without a slug; skipped".into()],
        guard_violations: Vec::new(),
        guard: GuardContext {
            max_deletes: 7,
            prune: vec![Pattern::parse("Bucket/*").unwrap()],
            exclude: vec![Pattern::parse("Bucket/keep-*").unwrap()],
            declared: [Kind::Team, Kind::Bucket].into_iter().collect(),
        },
    }
}

fn known() -> BTreeSet<Kind> {
    [Kind::Team, Kind::Bucket, Kind::ResourcePools]
        .into_iter()
        .collect()
}

fn inputs(s: &Sources) -> Inputs<'_> {
    Inputs {
        sources: s,
        target: "https://tenant.example.com",
        prune: false,
        only: &[],
    }
}

#[test]
fn a_remembered_plan_comes_back_whole() {
    let dir = tempfile::tempdir().unwrap();
    let memo = Memo::open(dir.path(), Some("tok")).unwrap();
    let s = sources();
    let id = memo.entry_id(&inputs(&s));
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
fn a_plan_with_something_to_do_is_not_remembered() {
    let dir = tempfile::tempdir().unwrap();
    let memo = Memo::open(dir.path(), None).unwrap();
    let s = sources();
    let id = memo.entry_id(&inputs(&s));
    let mut p = plan();
    p.guard_violations.push(crate::plan::Guard::EmptyPrune {
        kind: Kind::Bucket,
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
    let base = memo.entry_id(&inputs(&s));
    let mut ids = vec![base];
    let mut edited = sources();
    edited.0[1].1[0] ^= 1;
    ids.push(memo.entry_id(&inputs(&edited)));
    let mut renamed = sources();
    renamed.0[1].0 = "cfg/buckets2.yaml".into();
    ids.push(memo.entry_id(&inputs(&renamed)));
    let mut fewer = sources();
    fewer.0.pop();
    ids.push(memo.entry_id(&inputs(&fewer)));
    ids.push(memo.entry_id(&Inputs {
        target: "https://other.example.com",
        ..inputs(&s)
    }));
    ids.push(memo.entry_id(&Inputs {
        prune: true,
        ..inputs(&s)
    }));
    let only = [Pattern::parse("Team/*").unwrap()];
    ids.push(memo.entry_id(&Inputs {
        only: &only,
        ..inputs(&s)
    }));
    // Another token: another key.
    let other = Memo::open(dir.path(), Some("tok2")).unwrap();
    ids.push(other.entry_id(&inputs(&s)));
    let distinct: BTreeSet<_> = ids.iter().collect();
    assert_eq!(distinct.len(), ids.len());
    // The same inputs, the same id.
    assert_eq!(memo.entry_id(&inputs(&sources())), base);
}

#[test]
fn an_entry_that_does_not_verify_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let memo = Memo::open(dir.path(), Some("tok")).unwrap();
    let s = sources();
    let id = memo.entry_id(&inputs(&s));
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
    let body = forged.split_once('\n').unwrap().1;
    let unkeyed = format!("{}\n{body}", blake3::hash(body.as_bytes()).to_hex());
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
    let id = memo.entry_id(&inputs(&s));
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
    let id = memo.entry_id(&inputs(&s));
    memo.remember(&id, Answers([9; 32]), &plan(), &known())
        .unwrap();
    assert_eq!(mode(&dir.path().join("plans").join(hex(&id))), 0o600);
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let err = Memo::open(dir.path(), None).unwrap_err().to_string();
    assert!(err.contains("others may write it"), "{err}");
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
        let id = memo.entry_id(&inputs(&s));
        memo.remember(&id, Answers([1; 32]), &plan(), &known())
            .unwrap();
    }
    let count = std::fs::read_dir(dir.path().join("plans")).unwrap().count();
    assert_eq!(count, KEEP);
}
