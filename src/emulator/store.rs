//! The emulator's store: SQLite (bundled), one row per resource, plus the references between
//! resources so that "still referenced" checks and cascades are one indexed query.
//!
//! The store is used behind one mutex, so every API operation (read-check-write) is atomic;
//! each write is also one SQLite transaction, so a crash never leaves half a write.

use std::path::Path;

use rusqlite::{params, Connection, OptionalExtension};
use serde_json::Value;

use crate::api::registry::{Address, Kind};

/// A store failure: the database itself, never a client mistake.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot open the store at {path}")]
    Open {
        path: String,
        #[source]
        source: rusqlite::Error,
    },
    #[error("store query failed")]
    Sql(#[from] rusqlite::Error),
    #[error("stored object {kind}/{slug} is not valid JSON")]
    Corrupt {
        kind: Kind,
        slug: String,
        #[source]
        source: serde_json::Error,
    },
}

/// A stored resource.
#[derive(Clone, Debug, PartialEq)]
pub struct Stored {
    /// Row id: stable for the life of the resource, new when it is created again.
    pub id: i64,
    pub object: Value,
}

pub struct Store {
    conn: Connection,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS resources (
    id   INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    slug TEXT NOT NULL,
    body TEXT NOT NULL,
    UNIQUE (kind, slug)
);
CREATE TABLE IF NOT EXISTS refs (
    from_kind TEXT NOT NULL,
    from_slug TEXT NOT NULL,
    to_kind   TEXT NOT NULL,
    to_slug   TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS refs_to ON refs (to_kind, to_slug);
CREATE INDEX IF NOT EXISTS refs_from ON refs (from_kind, from_slug);
";

/// The singleton's slug in the table.
fn key(slug: Option<&str>) -> &str {
    slug.unwrap_or("")
}

impl Store {
    /// Opens (creating if needed) the store at `path`, or an in-memory store.
    pub fn open(path: Option<&Path>) -> Result<Store, StoreError> {
        let shown = path.map_or(":memory:".to_string(), |p| p.display().to_string());
        let open_err = |source| StoreError::Open {
            path: shown.clone(),
            source,
        };
        let conn = match path {
            Some(p) => {
                if let Some(parent) = p.parent().filter(|p| !p.as_os_str().is_empty()) {
                    // A missing folder is reported by SQLite's open below.
                    let _ = std::fs::create_dir_all(parent);
                }
                Connection::open(p).map_err(open_err)?
            }
            None => Connection::open_in_memory().map_err(open_err)?,
        };
        if path.is_some() {
            conn.pragma_update(None, "journal_mode", "WAL")
                .map_err(open_err)?;
            conn.pragma_update(None, "synchronous", "NORMAL")
                .map_err(open_err)?;
        }
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(open_err)?;
        conn.execute_batch(SCHEMA).map_err(open_err)?;
        Ok(Store { conn })
    }

    /// A stored object's text, parsed.
    pub fn parse(kind: Kind, slug: &str, body: &str) -> Result<Value, StoreError> {
        serde_json::from_str(body).map_err(|source| StoreError::Corrupt {
            kind,
            slug: slug.to_string(),
            source,
        })
    }

    pub fn get(&self, kind: Kind, slug: Option<&str>) -> Result<Option<Stored>, StoreError> {
        let row: Option<(i64, String)> = self
            .conn
            .prepare_cached("SELECT id, body FROM resources WHERE kind = ?1 AND slug = ?2")?
            .query_row(params![kind.name(), key(slug)], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()?;
        row.map(|(id, body)| {
            Ok(Stored {
                id,
                object: Self::parse(kind, key(slug), &body)?,
            })
        })
        .transpose()
    }

    pub fn exists(&self, kind: Kind, slug: &str) -> Result<bool, StoreError> {
        Ok(self
            .conn
            .prepare_cached("SELECT 1 FROM resources WHERE kind = ?1 AND slug = ?2")?
            .exists(params![kind.name(), slug])?)
    }

    /// Inserts a new resource with its references; the row id.
    pub fn insert(
        &mut self,
        kind: Kind,
        slug: Option<&str>,
        object: &Value,
        refs: &[Address],
    ) -> Result<i64, StoreError> {
        let tx = self.conn.transaction()?;
        tx.execute(
            "INSERT INTO resources (kind, slug, body) VALUES (?1, ?2, ?3)",
            params![kind.name(), key(slug), object.to_string()],
        )?;
        let id = tx.last_insert_rowid();
        write_refs(&tx, kind, key(slug), refs)?;
        tx.commit()?;
        Ok(id)
    }

    /// Replaces a resource's object and references.
    pub fn replace(
        &mut self,
        kind: Kind,
        slug: Option<&str>,
        object: &Value,
        refs: &[Address],
    ) -> Result<(), StoreError> {
        let tx = self.conn.transaction()?;
        tx.execute(
            "UPDATE resources SET body = ?3 WHERE kind = ?1 AND slug = ?2",
            params![kind.name(), key(slug), object.to_string()],
        )?;
        write_refs(&tx, kind, key(slug), refs)?;
        tx.commit()?;
        Ok(())
    }

    /// Deletes resources and their outgoing references, all or none.
    pub fn delete_all(&mut self, addresses: &[Address]) -> Result<(), StoreError> {
        let tx = self.conn.transaction()?;
        for a in addresses {
            let slug = key(a.slug.as_deref());
            tx.execute(
                "DELETE FROM resources WHERE kind = ?1 AND slug = ?2",
                params![a.kind.name(), slug],
            )?;
            tx.execute(
                "DELETE FROM refs WHERE from_kind = ?1 AND from_slug = ?2",
                params![a.kind.name(), slug],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    /// The resources that reference this one, sorted.
    pub fn referrers(&self, kind: Kind, slug: &str) -> Result<Vec<Address>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT DISTINCT from_kind, from_slug FROM refs WHERE to_kind = ?1 AND to_slug = ?2",
        )?;
        let rows = stmt.query_map(params![kind.name(), slug], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (k, s) = row?;
            if let Some(k) = Kind::from_name(&k) {
                out.push(Address::new(k, (!s.is_empty()).then_some(s)));
            }
        }
        out.sort();
        Ok(out)
    }

    /// The slug of another resource of the kind whose top-level `field` has this value.
    pub fn find_by_field(
        &self,
        kind: Kind,
        field: &str,
        value: &str,
        except: Option<&str>,
    ) -> Result<Option<String>, StoreError> {
        let path = format!("$.\"{}\"", field.replace('"', ""));
        Ok(self
            .conn
            .prepare_cached(
                "SELECT slug FROM resources WHERE kind = ?1 AND json_extract(body, ?2) = ?3 \
                 AND slug != ?4 ORDER BY slug LIMIT 1",
            )?
            .query_row(
                params![kind.name(), path, value, except.unwrap_or("\u{0}")],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// Visits the kind's resources with a slug after `after`, in slug order, until `visit`
    /// returns false: each one's slug and JSON text as stored (see [`Store::parse`]).
    pub fn scan(
        &self,
        kind: Kind,
        after: &str,
        mut visit: impl FnMut(&str, String) -> Result<bool, StoreError>,
    ) -> Result<(), StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT slug, body FROM resources WHERE kind = ?1 AND slug > ?2 ORDER BY slug",
        )?;
        let mut rows = stmt.query(params![kind.name(), after])?;
        while let Some(row) = rows.next()? {
            let slug: String = row.get(0)?;
            let body: String = row.get(1)?;
            if !visit(&slug, body)? {
                break;
            }
        }
        Ok(())
    }

    /// Number of resources of a kind.
    pub fn count(&self, kind: Kind) -> Result<u64, StoreError> {
        let n: i64 = self
            .conn
            .prepare_cached("SELECT COUNT(*) FROM resources WHERE kind = ?1")?
            .query_row(params![kind.name()], |r| r.get(0))?;
        Ok(u64::try_from(n).unwrap_or(0))
    }
}

fn write_refs(
    tx: &rusqlite::Transaction<'_>,
    kind: Kind,
    slug: &str,
    refs: &[Address],
) -> Result<(), StoreError> {
    tx.execute(
        "DELETE FROM refs WHERE from_kind = ?1 AND from_slug = ?2",
        params![kind.name(), slug],
    )?;
    let mut stmt = tx.prepare_cached(
        "INSERT INTO refs (from_kind, from_slug, to_kind, to_slug) VALUES (?1, ?2, ?3, ?4)",
    )?;
    for r in refs {
        stmt.execute(params![
            kind.name(),
            slug,
            r.kind.name(),
            key(r.slug.as_deref())
        ])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn addr(kind: Kind, slug: &str) -> Address {
        Address::new(kind, Some(slug.into()))
    }

    #[test]
    fn insert_get_replace_delete() {
        let mut s = Store::open(None).unwrap();
        let id = s
            .insert(Kind::named("Bucket"), Some("b"), &json!({"slug": "b"}), &[])
            .unwrap();
        assert_eq!(
            s.get(Kind::named("Bucket"), Some("b")).unwrap(),
            Some(Stored {
                id,
                object: json!({"slug": "b"})
            })
        );
        assert!(s
            .insert(Kind::named("Bucket"), Some("b"), &json!({}), &[])
            .is_err());
        s.replace(
            Kind::named("Bucket"),
            Some("b"),
            &json!({"slug": "b", "name": "B"}),
            &[],
        )
        .unwrap();
        assert_eq!(
            s.get(Kind::named("Bucket"), Some("b"))
                .unwrap()
                .unwrap()
                .object["name"],
            "B"
        );
        s.delete_all(&[addr(Kind::named("Bucket"), "b")]).unwrap();
        assert_eq!(s.get(Kind::named("Bucket"), Some("b")).unwrap(), None);
    }

    #[test]
    fn references_follow_writes() {
        let mut s = Store::open(None).unwrap();
        s.insert(Kind::named("Team"), Some("t"), &json!({}), &[])
            .unwrap();
        s.insert(
            Kind::named("Bucket"),
            Some("b"),
            &json!({}),
            &[addr(Kind::named("Team"), "t")],
        )
        .unwrap();
        assert_eq!(
            s.referrers(Kind::named("Team"), "t").unwrap(),
            vec![addr(Kind::named("Bucket"), "b")]
        );
        s.replace(Kind::named("Bucket"), Some("b"), &json!({}), &[])
            .unwrap();
        assert_eq!(s.referrers(Kind::named("Team"), "t").unwrap(), vec![]);
    }

    #[test]
    fn unique_field_lookup_and_ordered_scan() {
        let mut s = Store::open(None).unwrap();
        for slug in ["c", "a", "b"] {
            s.insert(
                Kind::named("DerivedLabel"),
                Some(slug),
                &json!({"slug": slug, "label_name": format!("l-{slug}")}),
                &[],
            )
            .unwrap();
        }
        assert_eq!(
            s.find_by_field(Kind::named("DerivedLabel"), "label_name", "l-b", None)
                .unwrap(),
            Some("b".into())
        );
        assert_eq!(
            s.find_by_field(Kind::named("DerivedLabel"), "label_name", "l-b", Some("b"))
                .unwrap(),
            None
        );
        let mut seen = Vec::new();
        s.scan(Kind::named("DerivedLabel"), "a", |slug, _| {
            seen.push(slug.to_string());
            Ok(true)
        })
        .unwrap();
        assert_eq!(seen, vec!["b", "c"]);
        assert_eq!(s.count(Kind::named("DerivedLabel")).unwrap(), 3);
    }
}
