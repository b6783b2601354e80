use std::collections::BTreeMap;

use super::*;

/// Every entry under `dir` (hidden ones too) with what it holds: a file's bytes and mode, a
/// folder, a symlink's target. Two equal listings are the same folder byte for byte.
pub(crate) fn listing(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    if !dir.exists() {
        return out;
    }
    for e in walkdir::WalkDir::new(dir).sort_by_file_name().min_depth(1) {
        let e = e.unwrap();
        let rel = e.path().strip_prefix(dir).unwrap().display().to_string();
        let meta = std::fs::symlink_metadata(e.path()).unwrap();
        let what = if meta.file_type().is_symlink() {
            format!("-> {}", std::fs::read_link(e.path()).unwrap().display())
        } else if meta.is_dir() {
            "dir".to_string()
        } else {
            format!(
                "{:?} {}",
                meta.permissions().readonly(),
                String::from_utf8_lossy(&std::fs::read(e.path()).unwrap())
            )
        };
        out.insert(rel, what);
    }
    out
}

fn mixed(root: &Path) -> Batch {
    let mut b = Batch::new(root);
    b.replace("teams/a.yaml", "a2\n");
    b.create("teams/b.yaml", "b\n");
    b.remove("teams/old.yaml");
    b.create("monitors/deep/m.yaml", "m\n");
    b.create("index.json", "{}\n");
    b
}

fn seed(root: &Path) {
    std::fs::create_dir_all(root.join("teams")).unwrap();
    std::fs::write(root.join("teams/a.yaml"), "a\n").unwrap();
    std::fs::write(root.join("teams/old.yaml"), "old\n").unwrap();
    std::fs::write(root.join("notes.md"), "# mine\n").unwrap();
}

#[test]
fn makes_every_change_and_leaves_nothing_hidden() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("out");
    seed(&root);
    let mut ro = std::fs::metadata(root.join("teams/a.yaml"))
        .unwrap()
        .permissions();
    ro.set_readonly(true);
    std::fs::set_permissions(root.join("teams/a.yaml"), ro).unwrap();
    mixed(&root).commit().unwrap();
    let after = listing(&root);
    let expected: BTreeMap<String, String> = [
        ("index.json", "false {}\n"),
        ("monitors", "dir"),
        ("monitors/deep", "dir"),
        ("monitors/deep/m.yaml", "false m\n"),
        ("notes.md", "false # mine\n"),
        ("teams", "dir"),
        ("teams/a.yaml", "true a2\n"),
        ("teams/b.yaml", "false b\n"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    assert_eq!(
        after, expected,
        "permissions kept, no temporary or backup left"
    );
}

/// Issue 3: a failure at any step, staging or moving into place, leaves the folder byte for
/// byte as it was, and the message says nothing was written.
#[test]
fn a_failure_at_any_step_leaves_the_folder_as_it_was() {
    for fault in (1..=4).map(Fault::Stage).chain((1..=5).map(Fault::Commit)) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("out");
        seed(&root);
        let before = listing(&root);
        let failed = mixed(&root).with_fault(fault).commit().unwrap_err();
        assert_eq!(listing(&root), before, "{fault:?}");
        assert!(failed.not_restored.is_empty(), "{fault:?}: {failed}");
        let msg = failed.to_string();
        assert!(msg.contains("Permission denied"), "{msg}");
        match fault {
            Fault::Commit(n) if n > 1 => assert!(
                msg.ends_with(&format!(
                    "; nothing was written (the {} file{} already in place put back as they were)",
                    n - 1,
                    if n == 2 { "" } else { "s" }
                )),
                "{msg}"
            ),
            _ => assert!(msg.ends_with("; nothing was written"), "{msg}"),
        }
    }
}

#[test]
fn a_root_it_created_is_removed_again() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("new/out");
    let mut b = Batch::new(&root);
    b.create("teams/a.yaml", "a\n");
    b.create("teams/b.yaml", "b\n");
    let failed = b.with_fault(Fault::Commit(2)).commit().unwrap_err();
    assert_eq!(failed.undone, 1);
    assert!(
        !dir.path().join("new").exists(),
        "{:?}",
        listing(dir.path())
    );
}

#[test]
fn refusals_come_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    seed(root);
    let before = listing(root);
    let cases: Vec<(Batch, &str)> = vec![
        {
            let mut b = Batch::new(root);
            b.create("teams/new.yaml", "x");
            b.create("teams/new.yaml", "y");
            (b, "would be written twice")
        },
        {
            let mut b = Batch::new(root);
            b.create("teams/z.yaml", "z");
            b.create("notes.md", "x");
            (b, "notes.md` already exists")
        },
        {
            let mut b = Batch::new(root);
            b.create("teams/z.yaml", "z");
            b.create("notes.md/x.yaml", "x");
            (b, "notes.md` is not a directory")
        },
        {
            let mut b = Batch::new(root);
            b.replace("teams", "x");
            (b, "teams` is not a regular file")
        },
        {
            let mut b = Batch::new(root);
            b.remove("teams/missing.yaml");
            (b, "missing.yaml`: ")
        },
        {
            let mut b = Batch::new(root);
            b.create("../escape.yaml", "x");
            (b, "is not a path inside")
        },
    ];
    for (batch, expected) in cases {
        let failed = batch.commit().unwrap_err();
        let msg = failed.to_string();
        assert!(msg.contains(expected), "{msg}");
        assert!(msg.ends_with("; nothing was written"), "{msg}");
        assert_eq!(listing(root), before, "{msg}");
    }
}

#[cfg(unix)]
#[test]
fn never_through_a_symlink() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(outside.path().join("real.yaml"), "keep\n").unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join("teams")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("real.yaml"), root.join("a.yaml")).unwrap();
    let before = (listing(root), listing(outside.path()));
    for (rel, replace) in [
        ("teams/new.yaml", false),
        ("a.yaml", true),
        ("a.yaml", false),
    ] {
        let mut b = Batch::new(root);
        b.create("first.yaml", "1");
        if replace {
            b.replace(rel, "x");
        } else {
            b.create(rel, "x");
        }
        let failed = b.commit().unwrap_err();
        assert!(matches!(failed.error, WriteError::Symlink(_)), "{failed}");
        assert_eq!((listing(root), listing(outside.path())), before);
    }
}

#[test]
fn a_file_that_appears_meanwhile_is_not_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let (temp, mut f) = hidden_file(root, "tmp").unwrap();
    f.write_all(b"ours").unwrap();
    std::fs::write(root.join("theirs.yaml"), "theirs").unwrap();
    let e = place(
        &root.join("theirs.yaml"),
        &Op::Create(String::new()),
        Some(&temp),
    )
    .unwrap_err();
    assert!(matches!(e, WriteError::Exists(_)), "{e}");
    assert_eq!(
        std::fs::read_to_string(root.join("theirs.yaml")).unwrap(),
        "theirs"
    );
}

#[test]
fn an_undo_that_fails_names_the_path_and_where_its_content_is() {
    let failed = Failed {
        error: WriteError::Io {
            path: PathBuf::from("out/b.yaml"),
            source: io::Error::other("disk full"),
        },
        undone: 1,
        not_restored: vec![(
            PathBuf::from("out/a.yaml"),
            "busy; its earlier content is in `out/.cfgctl-1-2.bak`".into(),
        )],
    };
    assert_eq!(
        failed.to_string(),
        "`out/b.yaml`: disk full; the undo could not restore: `out/a.yaml` (busy; its earlier \
         content is in `out/.cfgctl-1-2.bak`); every other change was undone"
    );
}
