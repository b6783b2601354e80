//! The checks across a load's manifests: an address declared twice, a unique field's value
//! held twice, a reference to an address no manifest declares.

use super::*;

/// Checks across manifests: duplicates, unique fields, undeclared references.
pub(super) fn check_set(loaded: &mut Loaded) {
    let mut locator = Locator::of(loaded);
    let mut first_seen: BTreeMap<Address, usize> = BTreeMap::new();
    let mut duplicates = Vec::new();
    for (i, m) in loaded.manifests.iter().enumerate() {
        match first_seen.get(&m.address()) {
            Some(&first) => {
                let f = &loaded.manifests[first];
                loaded.diagnostics.push(Diagnostic::error(
                    &m.file,
                    m.pos,
                    Problem::Duplicate {
                        address: m.address().to_string(),
                        first: format!("{}:{}", f.file.display(), f.pos),
                    },
                ));
                duplicates.push(i);
            }
            None => {
                first_seen.insert(m.address(), i);
            }
        }
    }
    for i in duplicates.into_iter().rev() {
        loaded.manifests.remove(i);
    }

    let mut unique: BTreeMap<(Kind, &'static str, String), usize> = BTreeMap::new();
    for (i, m) in loaded.manifests.iter().enumerate() {
        for &field in m.kind.def().unique_fields {
            let Some(value) = m.unique_value(field) else {
                continue;
            };
            if value.is_empty() {
                continue;
            }
            match unique.get(&(m.kind, field, value.to_string())) {
                Some(&first) => {
                    let pointer = format!("/{field}");
                    let provenance = &loaded.provenance;
                    let (file, pos) = locator.written_at(provenance, m, &pointer);
                    let (first_file, first_pos) =
                        locator.written_at(provenance, &loaded.manifests[first], &pointer);
                    loaded.diagnostics.push(Diagnostic::error(
                        &file,
                        pos,
                        Problem::DuplicateUnique {
                            kind: m.kind,
                            field,
                            value: value.to_string(),
                            other: loaded.manifests[first].address().to_string(),
                            first: format!("{}:{}", first_file.display(), first_pos),
                        },
                    ));
                }
                None => {
                    unique.insert((m.kind, field, value.to_string()), i);
                }
            }
        }
    }

    // At the field when the manifest kept its positions, else at its document: located only
    // where warnings are shown (`Loaded::locate_warnings`), since a repository that refers to
    // what another declares has one per manifest, and locating them reads every file again.
    let mut warnings = Vec::new();
    for m in &loaded.manifests {
        for r in m.references().iter() {
            let target = Address::new(r.target, Some(r.slug.clone()));
            if !first_seen.contains_key(&target) {
                warnings.push(Diagnostic::warning(
                    &m.file,
                    m.field_pos(&r.pointer),
                    Problem::UndeclaredReference {
                        from: m.address().to_string(),
                        path: r.path.clone(),
                        target: target.to_string(),
                    },
                ));
            }
        }
    }
    loaded.references_declared = warnings.is_empty();
    loaded.diagnostics.append(&mut warnings);
}
