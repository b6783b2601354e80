//! Resource address patterns: `KIND/SLUG-GLOB` (`Dashboard/team-a-*`), used by `prune`,
//! `exclude` and `--only`. A singleton (no slug) is named by its bare kind name
//! (`ResourcePools`); `*/*` matches every slug-addressed resource and `*` every singleton.

use std::fmt;

use wildmatch::WildMatch;

use crate::api::registry::{Address, Kind};

/// A parsed pattern. The kind part is a kind name or a glob over kind names (`*`); the slug
/// part is a glob with `*` and `?`. `ResourcePools` (the singleton) has no slug part.
#[derive(Clone, Debug)]
pub struct Pattern {
    text: String,
    kind: WildMatch,
    /// The kind part is a glob (`*`, `Trace*`), not one kind's name.
    kind_is_glob: bool,
    slug: Option<WildMatch>,
}

impl PartialEq for Pattern {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

/// Why a pattern was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatternError {
    #[error("pattern `{0}` is empty; expected KIND/SLUG-GLOB such as `Dashboard/team-a-*`")]
    Empty(String),
    #[error("pattern `{0}` has no `/`; expected KIND/SLUG-GLOB such as `Dashboard/team-a-*`")]
    NoSlash(String),
    #[error("`{0}` is not a KIND/SLUG-GLOB pattern: its kind part is no kind name (a capital letter, then letters and digits, or a glob); a path goes after the options")]
    NotAKind(String),
    #[error("pattern `{pattern}` names unknown kind `{kind}`{hint}")]
    UnknownKind {
        pattern: String,
        kind: String,
        hint: String,
    },
}

impl Pattern {
    pub fn parse(text: &str) -> Result<Pattern, PatternError> {
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Err(PatternError::Empty(text.to_string()));
        }
        let (kind, slug) = match trimmed.split_once('/') {
            Some((k, s)) => (k, Some(s)),
            // A singleton kind has no slug part; a bare glob matches singletons only.
            None if Kind::from_name(trimmed).is_some_and(|k| k.def().singleton) => (trimmed, None),
            None if trimmed.contains(['*', '?']) => (trimmed, None),
            None => return Err(PatternError::NoSlash(text.to_string())),
        };
        let has_wildcard = kind.contains(['*', '?']);
        // A kind this cfgctl does not know may be a newer target's; one close to a known
        // kind's name is a typo.
        if !has_wildcard && Kind::from_name(kind).is_none() {
            if let Some(k) = Kind::suggest(kind) {
                return Err(PatternError::UnknownKind {
                    pattern: text.to_string(),
                    kind: kind.to_string(),
                    hint: format!(" (did you mean `{k}`?)"),
                });
            }
        }
        // A kind name is a capital letter, then letters and digits (a newer target's too):
        // anything else is a path.
        let kind_like = |k: &str| {
            k.chars()
                .next()
                .is_some_and(|c| c.is_ascii_uppercase() || c == '*' || c == '?')
                && k.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '*' || c == '?')
        };
        if !kind_like(kind) {
            return Err(PatternError::NotAKind(text.to_string()));
        }
        Ok(Pattern {
            text: trimmed.to_string(),
            kind: WildMatch::new(kind),
            kind_is_glob: has_wildcard,
            slug: slug.map(WildMatch::new),
        })
    }

    /// Whether the address matches. A singleton matches its bare name (`ResourcePools`),
    /// `ResourcePools/*`, and a bare glob (`*`), never `*/*`.
    pub fn matches(&self, address: &Address) -> bool {
        if !self.kind.matches(address.kind.name()) {
            return false;
        }
        match (&address.slug, &self.slug) {
            (Some(slug), Some(glob)) => glob.matches(slug),
            (Some(_), None) => false,
            (None, Some(glob)) => !self.kind_is_glob && glob.matches(""),
            (None, None) => true,
        }
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether the kind part matches `kind` (a glob or its name).
    pub fn matches_kind(&self, kind: crate::api::registry::Kind) -> bool {
        self.kind.matches(kind.name())
    }

    /// Whether the kind part picks `kind` out of the others: its name or a glob that is not
    /// every kind (`LogScaleAction/*`, `LogScale*/*`; not `*/*`).
    pub fn names_kind(&self, kind: crate::api::registry::Kind) -> bool {
        let every = self
            .text
            .split('/')
            .next()
            .is_some_and(|k| k.chars().all(|c| c == '*'));
        !every && self.matches_kind(kind)
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(kind: Kind, slug: &str) -> Address {
        Address::new(kind, Some(slug.to_string()))
    }

    #[test]
    fn globs_over_slugs_and_kinds() {
        let p = Pattern::parse("Dashboard/team-a-*").unwrap();
        assert!(p.matches(&addr(Kind::named("Dashboard"), "team-a-latency")));
        assert!(!p.matches(&addr(Kind::named("Dashboard"), "team-b-latency")));
        assert!(!p.matches(&addr(Kind::named("Monitor"), "team-a-latency")));
        let any = Pattern::parse("*/scratch-?").unwrap();
        assert!(any.matches(&addr(Kind::named("Bucket"), "scratch-1")));
        assert!(!any.matches(&addr(Kind::named("Bucket"), "scratch-10")));
    }

    #[test]
    fn singleton() {
        let p = Pattern::parse("ResourcePools").unwrap();
        assert!(p.matches(&Address::new(Kind::named("ResourcePools"), None)));
        assert!(!p.matches(&addr(Kind::named("Bucket"), "x")));
        let star = Pattern::parse("ResourcePools/*").unwrap();
        assert!(star.matches(&Address::new(Kind::named("ResourcePools"), None)));
        // `*` is every singleton, `*/*` every slug-addressed resource.
        let singletons = Pattern::parse("*").unwrap();
        let every = Pattern::parse("*/*").unwrap();
        for kind in ["ResourcePools", "TraceBehaviorConfig"] {
            let a = Address::new(Kind::named(kind), None);
            assert!(singletons.matches(&a) && !every.matches(&a), "{kind}");
        }
        assert!(!singletons.matches(&addr(Kind::named("Bucket"), "x")));
        assert!(every.matches(&addr(Kind::named("Bucket"), "x")));
        let trace = Pattern::parse("Trace*").unwrap();
        assert!(trace.matches(&Address::new(Kind::named("TraceBehaviorConfig"), None)));
        assert!(!trace.matches(&addr(Kind::named("TraceBehavior"), "x")));
    }

    #[test]
    fn refused_patterns() {
        assert_eq!(
            Pattern::parse("Dashboards/x").unwrap_err().to_string(),
            "pattern `Dashboards/x` names unknown kind `Dashboards` (did you mean `Dashboard`?)"
        );
        assert!(matches!(
            Pattern::parse("dashboard"),
            Err(PatternError::NoSlash(_))
        ));
        assert!(matches!(Pattern::parse(" "), Err(PatternError::Empty(_))));
        // A path is no pattern (red team E8: `apply --rotate-secrets /tmp/x.plan` took the
        // plan file as its pattern and applied the current directory).
        for path in ["/tmp/rt/abs.plan", "./a", "../x/y", "plans/x.json"] {
            assert_eq!(
                Pattern::parse(path).unwrap_err().to_string(),
                format!("`{path}` is not a KIND/SLUG-GLOB pattern: its kind part is no kind name (a capital letter, then letters and digits, or a glob); a path goes after the options"),
                "{path}"
            );
        }
        assert!(
            Pattern::parse("NewerKind2/x").is_ok(),
            "a newer target's kind"
        );
    }
}
