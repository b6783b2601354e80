//! The target's resources as read from its lists. Each object is kept as the JSON text it was
//! listed as, with what a plan asks of every object worked out once, when its page arrived:
//! the digest of its comparable form, the resources it references and the fields of a newer
//! API it carries. A no-change plan compares digests and never holds a parsed tree per object; an
//! object is parsed again only where it changes (or is exported, pulled, deleted).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, OnceLock};

use serde_json::Value;

use super::normalize::{self, Digest};
use crate::api::registry::{Address, FoundReference, Kind};

mod listed;

/// The target's resources, as read from its lists.
#[derive(Clone, Debug, Default)]
pub struct Current {
    pub resources: BTreeMap<Address, Object>,
    /// Kinds whose state was read (a kind not here is unknown, not empty).
    pub known: BTreeSet<Kind>,
    /// Kinds whose list the target refused (403, 404, 501), with its answer: not known, and an
    /// error when the plan needs them (`plan::refused`).
    pub refused: BTreeMap<Kind, String>,
}

impl Current {
    /// Adds an object given as a value (tests, the singleton's read, pulls).
    pub fn insert(&mut self, address: Address, value: &Value) {
        let object = Object::new(address.kind, value);
        self.resources.insert(address, object);
    }

    /// The object at `address`, parsed.
    pub fn value(&self, address: &Address) -> Option<Value> {
        self.resources.get(address).map(Object::value)
    }

    /// Lets go of the text of every object that is as expected (see [`Expected`]).
    pub fn release_expected(&mut self, expected: &Expected) {
        for (address, object) in &mut self.resources {
            object.release_if_expected(address, expected);
        }
    }

    /// The resources of the current state that reference `address` (sorted).
    pub fn referrers(&self, address: &Address) -> Vec<Address> {
        self.resources
            .iter()
            .filter(|(a, obj)| {
                *a != address
                    && obj
                        .references()
                        .iter()
                        .any(|r| r.target == address.kind && Some(&r.slug) == address.slug.as_ref())
            })
            .map(|(a, _)| a.clone())
            .collect()
    }
}

/// What a target holds, as its lists were read: the kinds read and the addresses found.
#[derive(Clone, Debug, Default)]
pub struct Listed {
    pub known: std::collections::BTreeSet<Kind>,
    pub addresses: std::collections::BTreeSet<Address>,
}

impl Listed {
    pub fn of(current: &Current) -> Listed {
        Listed {
            known: current.known.clone(),
            addresses: current.resources.keys().cloned().collect(),
        }
    }

    /// Whether the target has an object at `m`'s address (its kind read).
    pub fn holds(&self, m: &crate::manifest::Manifest) -> bool {
        self.known.contains(&m.kind) && self.addresses.contains(&m.address())
    }
}

/// One current object: its JSON text and what was worked out from it once.
#[derive(Clone, Debug)]
pub struct Object {
    /// The object's JSON text: a slice of the page it was listed in (the page's buffer is
    /// shared by its objects, not copied into one small allocation each). `None` once let go
    /// (an object its manifest describes exactly: see [`Expected`]).
    raw: Option<bytes::Bytes>,
    digest: Digest,
    references: Vec<FoundReference>,
    newer: Vec<String>,
}

impl Object {
    /// The object of a kind given as a value.
    pub fn new(kind: Kind, value: &Value) -> Object {
        // A `Value` always serialises.
        let text = serde_json::to_vec(value).unwrap_or_default();
        Object::with_raw(kind, value, text.into())
    }

    /// The object of a kind as listed: its text (a slice of its page), and the same text
    /// parsed; its embedded `documents` when the page's split read them
    /// (`api::wire::split_list_page_items`).
    pub fn listed(
        kind: Kind,
        raw: &bytes::Bytes,
        documents: Option<Vec<crate::api::wire::Document>>,
    ) -> Result<(Object, Value), serde_json::Error> {
        // An embedded document's string decoded apart (see [`listed::value`]): the same value.
        let value: Value = match listed::value(kind, raw, documents) {
            Some(value) => value,
            None => serde_json::from_slice(raw)?,
        };
        let object = Object::with_raw(kind, &value, raw.clone());
        Ok((object, value))
    }

    fn with_raw(kind: Kind, value: &Value, raw: bytes::Bytes) -> Object {
        let (digest, newer) = normalize::digest_listed(kind, value);
        Object {
            raw: Some(raw),
            digest,
            references: kind.def().references_in(value),
            newer,
        }
    }

    /// The object, parsed from its text (which was parsed once already, so this cannot fail;
    /// `null` if it ever did). An object let go of (unchanged: nothing is ever done with it
    /// but count it) is `null` too.
    pub fn value(&self) -> Value {
        match &self.raw {
            Some(raw) => serde_json::from_slice(raw).unwrap_or(Value::Null),
            None => Value::Null,
        }
    }

    /// Lets go of the text when the object is as expected; true when it did.
    pub fn release_if_expected(&mut self, address: &Address, expected: &Expected) -> bool {
        // Let go of already (as its page was worked out): no lookup.
        if self.raw.is_none() {
            return true;
        }
        let release = expected.matches(address, self.digest);
        if release {
            self.raw = None;
        }
        release
    }

    /// The digest of the object's comparable form (without `ignore` rules).
    pub fn digest(&self) -> Digest {
        self.digest
    }

    /// Every reference the object makes, in registry order.
    pub fn references(&self) -> &[FoundReference] {
        &self.references
    }

    /// Paths of the fields this cfgctl's API description lacks (a newer server's).
    pub fn newer_fields(&self) -> &[String] {
        &self.newer
    }
}

/// The digests of the manifests a plan will compare, handed to the reading of the target as
/// soon as they are worked out (the manifests load while the target is read): an object listed
/// with exactly its manifest's digest is unchanged, so its text is let go at once and a
/// no-change plan holds digests, not the tenant. Kinds with `ignore` rules are left out (their
/// comparison needs both objects in full).
#[derive(Clone, Debug, Default)]
pub struct Expected(Arc<OnceLock<std::collections::HashMap<Address, Digest>>>);

impl Expected {
    /// Sets the digests (once; later calls change nothing).
    pub fn set(
        &self,
        desired: &[&crate::manifest::Manifest],
        settings: &crate::config::settings::Settings,
    ) {
        // Set already (the memo's way sets them as the load ends): not worked out again.
        if self.is_set() {
            return;
        }
        let digests = desired
            .iter()
            .filter(|m| !settings.ignore.iter().any(|r| r.kind == m.kind))
            .map(|m| (m.address(), super::digest(m)))
            .collect();
        let _ = self.0.set(digests);
    }

    /// Works out the digest of every manifest loaded (on all cores: see [`super::prepare`])
    /// and sets them: done while the target is still read, so that the objects read from
    /// then on let go of their text at once.
    pub fn prepare(&self, loaded: &crate::manifest::Loaded) {
        let all: Vec<&crate::manifest::Manifest> = loaded.manifests.iter().collect();
        super::prepare(&all);
        self.set(&all, &loaded.settings);
    }

    /// Whether the digests are set.
    pub fn is_set(&self) -> bool {
        self.0.get().is_some()
    }

    /// Whether the object at `address` has its manifest's digest (false while the digests are
    /// not known yet).
    pub fn matches(&self, address: &Address, digest: Digest) -> bool {
        self.0
            .get()
            .and_then(|d| d.get(address))
            .is_some_and(|d| *d == digest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_listed_object_is_its_slice_of_the_page() {
        let page = bytes::Bytes::from_static(
            br#"{"buckets": [{"slug": "a", "name": "A", "team_slug": "t"}, {"slug": "b", "name": "B"}], "page": {}}"#,
        );
        let (_, items) = crate::api::wire::split_list_page(Kind::named("Bucket"), &page).unwrap();
        assert_eq!(items.len(), 2);
        let (first, value) = Object::listed(Kind::named("Bucket"), &items[0], None).unwrap();
        assert_eq!(value, json!({"slug": "a", "name": "A", "team_slug": "t"}));
        assert_eq!(first.value(), value);
        // The text is the page's own bytes, not a copy.
        assert!(page
            .as_ptr_range()
            .contains(&first.raw.as_ref().unwrap().as_ptr()));
        assert_eq!(
            first.digest(),
            Object::new(Kind::named("Bucket"), &value).digest()
        );
        assert_eq!(first.references().len(), 1);
        assert_eq!(first.references()[0].target, Kind::named("Team"));

        let mut current = Current::default();
        current
            .resources
            .insert(Address::new(Kind::named("Bucket"), Some("a".into())), first);
        current.insert(
            Address::new(Kind::named("Team"), Some("t".into())),
            &json!({"slug": "t", "name": "T"}),
        );
        assert_eq!(
            current.referrers(&Address::new(Kind::named("Team"), Some("t".into()))),
            vec![Address::new(Kind::named("Bucket"), Some("a".into()))]
        );
        assert_eq!(
            current.value(&Address::new(Kind::named("Team"), Some("t".into()))),
            Some(json!({"slug": "t", "name": "T"}))
        );
    }

    /// The listed side's shortcut (the strip of a newer API's members skipped when an object
    /// has none) against the slow way, `normalize::digest` and `newer::undescribed`: every
    /// manifest of the fixtures, the examples and the harness's mix (`../shared/perf/perf.py
    /// --emit-only`, 2,000 resources; when beside the repository), as written and as a server
    /// lists it (canonical form, server-owned fields), with and without members of a newer API.
    #[test]
    fn a_listed_object_is_worked_out_as_the_slow_way_does() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let generated = tempfile::tempdir().unwrap();
        let mut dirs = vec![root.join("fixtures/valid"), root.join("examples")];
        dirs.extend(crate::util::test_support::harness_mix(
            2000,
            generated.path(),
        ));
        let mut seen = 0;
        for dir in dirs {
            let Ok(loaded) = crate::manifest::load_dir(&dir) else {
                continue;
            };
            for m in &loaded.manifests {
                let mut listed = crate::api::spec::canonical(m.kind, &m.spec);
                if let Value::Object(map) = &mut listed {
                    for field in m.kind.def().server_owned {
                        map.insert(field.to_string(), json!("2026-01-01T00:00:00Z"));
                    }
                }
                let mut newer = listed.clone();
                newer["zz_newer"] = json!({"a": 1});
                newer["labels"] = json!({"k": "v"});
                for value in [(*m.spec).clone(), listed, newer] {
                    let raw = bytes::Bytes::from(serde_json::to_vec(&value).unwrap());
                    let (object, _) = Object::listed(m.kind, &raw, None).unwrap();
                    assert_eq!(
                        object.digest(),
                        normalize::digest(m.kind, &value),
                        "{}: {value}",
                        m.address()
                    );
                    let undescribed: Vec<String> = super::super::newer::undescribed(m.kind, &value)
                        .into_iter()
                        .collect();
                    assert_eq!(object.newer_fields(), undescribed);
                    assert_eq!(object.references(), m.kind.def().references_in(&value));
                    seen += 1;
                }
            }
        }
        // fixtures/valid and examples alone (a clone without the harness beside it) hold 31
        // manifests, each worked out three ways.
        assert!(seen >= 90, "only {seen} objects");
    }

    #[test]
    fn an_object_as_expected_lets_go_of_its_text() {
        let spec = json!({"slug": "a", "name": "A"});
        let m = crate::manifest::Manifest {
            kind: Kind::named("Bucket"),
            slug: Some("a".into()),
            spec: spec.clone().into(),
            file: "b.yaml".into(),
            pos: crate::util::yaml::Pos::new(1, 1),
            spans: Default::default(),
            digest: Default::default(),
            lean: None,
            prepared: Vec::new(),
        };
        let a = Address::new(Kind::named("Bucket"), Some("a".into()));
        let b = Address::new(Kind::named("Bucket"), Some("b".into()));
        let mut current = Current::default();
        // The server fills in what the manifest leaves out: still the same comparable form.
        current.insert(
            a.clone(),
            &json!({"slug": "a", "name": "A", "created_at": "x"}),
        );
        current.insert(b.clone(), &json!({"slug": "b", "name": "B"}));
        let expected = Expected::default();
        current.release_expected(&expected);
        assert!(current.resources[&a].raw.is_some(), "digests not known yet");
        expected.set(&[&m], &Default::default());
        current.release_expected(&expected);
        assert!(current.resources[&a].raw.is_none());
        assert_eq!(current.value(&b), Some(json!({"slug": "b", "name": "B"})));
        // A kind with `ignore` rules is compared in full, so nothing of it is let go.
        let settings = crate::config::settings::Settings {
            ignore: vec![crate::config::settings::IgnoreRule {
                kind: Kind::named("Bucket"),
                path: "description".into(),
            }],
            ..Default::default()
        };
        let other = Expected::default();
        other.set(&[&m], &settings);
        assert!(!other.matches(&a, current.resources[&a].digest()));
    }
}
