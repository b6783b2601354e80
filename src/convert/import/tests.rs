use super::*;

#[test]
fn slugs_are_lower_case_words_and_unique_in_the_order_asked() {
    assert_eq!(slug("KubePodCrashLooping"), "kubepodcrashlooping");
    assert_eq!(slug("node:node_num_cpu:sum"), "node-node-num-cpu-sum");
    assert_eq!(slug("--"), "unnamed");
    assert_eq!(slug(&"a".repeat(300)).len(), MAX_SLUG);
    let mut slugs = Slugs::default();
    assert_eq!(
        ["Down", "down", "Down", "down-2"].map(|s| slugs.unique(s)),
        ["down", "down-2", "down-3", "down-2-2"]
    );
}

/// A name's own slug is never handed to another name as its suffixed form (red team E17:
/// "cafe uberblick 2" became `cafe-uberblick-2-2`, its slug taken by the second "Cafe Uberblick"),
/// so adding or reordering a name does not rename another.
#[test]
fn a_names_own_slug_is_kept_for_it() {
    let names = ["Café Überblick", "Cafe Uberblick", "cafe uberblick 2"];
    let mut slugs = Slugs::reserving(names);
    assert_eq!(
        names.map(|n| slugs.unique(n)),
        ["cafe-uberblick", "cafe-uberblick-3", "cafe-uberblick-2"]
    );
}

/// A title in another language keeps its words: accented letters are written as their plain
/// letters (`é` -> `e`, `ß` -> `ss`), other scripts transliterated, never dropped.
#[test]
fn accented_and_other_letters_are_transliterated_not_dropped() {
    assert_eq!(slug("Café Überblick"), "cafe-uberblick");
    assert_eq!(slug("Straßen-Latenz (ÆØÅ)"), "strassen-latenz-aeoa");
    assert_eq!(slug("Łódź p99"), "lodz-p99");
    assert_eq!(slug("Задержка API"), "zaderzhka-api");
    assert_eq!(slug("🚀 deploys"), "rocket-deploys");
    // Nothing usable is still "unnamed", and the length cap holds after transliteration.
    assert_eq!(slug("¿?"), "unnamed");
    assert_eq!(slug(&"ß".repeat(300)).len(), MAX_SLUG);
}

#[test]
fn the_kinds_are_found_by_the_fields_written() {
    let monitor = kind_with(&["prometheus_query", "series_conditions"]).unwrap();
    assert_eq!(monitor, Kind::named("Monitor"));
    assert!(matches!(
        kind_with(&["no_such_field"]),
        Err(ImportError::NoKind { .. })
    ));
}

#[test]
fn existing_files_are_refused_without_force_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("rules")).unwrap();
    std::fs::write(dir.path().join("rules/a.yaml"), "mine\n").unwrap();
    let mut output = Output::default();
    output.files.insert("rules/a.yaml".into(), "new\n".into());
    output.files.insert("rules/b.yaml".into(), "new\n".into());
    let e = write(dir.path(), &output, false).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "rules/a.yaml already exists in {}: nothing was written (--force replaces them)",
            dir.path().display()
        )
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("rules/a.yaml")).unwrap(),
        "mine\n"
    );
    assert!(!dir.path().join("rules/b.yaml").exists());
    assert!(!dir.path().join(REPORT).exists());
    write(dir.path(), &output, true).unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("rules/a.yaml")).unwrap(),
        "new\n"
    );
    assert!(dir.path().join(REPORT).exists());
}
