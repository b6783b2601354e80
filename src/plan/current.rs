//! The target's resources as read from its lists. Each object is kept as the JSON text it was
//! listed as, with what a plan asks of every object worked out once, when its page arrived:
//! the digest of its comparable form, the resources it references and the fields of a newer
//! API it carries. A no-change plan compares digests and never holds 10,000 parsed trees; an
//! object is parsed again only where it changes (or is exported, pulled, deleted).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::value::RawValue;
use serde_json::Value;

use super::normalize::{self, Digest};
use crate::registry::{Address, FoundReference, Kind};

/// The target's resources, as read from its lists.
#[derive(Clone, Debug, Default)]
pub struct Current {
    pub resources: BTreeMap<Address, Object>,
    /// Kinds whose state was read (a kind not here is unknown, not empty).
    pub known: BTreeSet<Kind>,
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

/// One current object: its JSON text and what was worked out from it once.
#[derive(Clone, Debug)]
pub struct Object {
    /// The object's JSON text: a slice of the page it was listed in (the page's buffer is
    /// shared by its objects, not copied into 10,000 small allocations).
    raw: bytes::Bytes,
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

    /// The object of a kind as listed: its text (`raw`, borrowed from `page`), and the same
    /// text parsed.
    pub fn listed(
        kind: Kind,
        page: &bytes::Bytes,
        raw: &RawValue,
    ) -> Result<(Object, Value), serde_json::Error> {
        let value: Value = serde_json::from_str(raw.get())?;
        let object = Object::with_raw(kind, &value, page.slice_ref(raw.get().as_bytes()));
        Ok((object, value))
    }

    fn with_raw(kind: Kind, value: &Value, raw: bytes::Bytes) -> Object {
        Object {
            raw,
            digest: normalize::digest(kind, value),
            references: kind.def().references_in(value),
            newer: super::newer::undescribed(kind, value).into_iter().collect(),
        }
    }

    /// The object, parsed from its text (which was parsed once already, so this cannot fail;
    /// `null` if it ever did).
    pub fn value(&self) -> Value {
        serde_json::from_slice(&self.raw).unwrap_or(Value::Null)
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_listed_object_is_its_slice_of_the_page() {
        let page = bytes::Bytes::from_static(
            br#"{"buckets": [{"slug": "a", "name": "A", "team_slug": "t"}, {"slug": "b", "name": "B"}], "page": {}}"#,
        );
        let items = crate::wire::list_items(Kind::Bucket, &page).unwrap();
        assert_eq!(items.len(), 2);
        let (first, value) = Object::listed(Kind::Bucket, &page, items[0]).unwrap();
        assert_eq!(value, json!({"slug": "a", "name": "A", "team_slug": "t"}));
        assert_eq!(first.value(), value);
        // The text is the page's own bytes, not a copy.
        assert!(page.as_ptr_range().contains(&first.raw.as_ptr()));
        assert_eq!(first.digest(), Object::new(Kind::Bucket, &value).digest());
        assert_eq!(first.references().len(), 1);
        assert_eq!(first.references()[0].target, Kind::Team);

        let mut current = Current::default();
        current
            .resources
            .insert(Address::new(Kind::Bucket, Some("a".into())), first);
        current.insert(
            Address::new(Kind::Team, Some("t".into())),
            &json!({"slug": "t", "name": "T"}),
        );
        assert_eq!(
            current.referrers(&Address::new(Kind::Team, Some("t".into()))),
            vec![Address::new(Kind::Bucket, Some("a".into()))]
        );
        assert_eq!(
            current.value(&Address::new(Kind::Team, Some("t".into()))),
            Some(json!({"slug": "t", "name": "T"}))
        );
    }
}
