//! What the target can do: its operations per kind, from its description (or assumed), and
//! the fields of a newer API it describes.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::newer;
use crate::api::registry::{Kind, Op, Ops};

/// Which operations the target offers, per kind.
#[derive(Clone, Debug, PartialEq)]
pub struct Capabilities {
    pub ops: BTreeMap<Kind, Ops>,
    /// False when the target's swagger.json could not be read and the full registry is
    /// assumed.
    pub described: bool,
    /// `Kind.path` of the fields the target describes that this cfgctl's description lacks.
    pub newer_fields: BTreeSet<String>,
}

impl Capabilities {
    /// The full API of the registry (no description read).
    pub fn assumed_full() -> Capabilities {
        Capabilities {
            ops: crate::api::registry::embedded_kinds()
                .into_iter()
                .map(|d| (d.kind, d.full_ops))
                .collect(),
            described: false,
            newer_fields: BTreeSet::new(),
        }
    }

    /// What a swagger document describes.
    pub fn from_swagger(doc: &Value) -> Capabilities {
        Capabilities {
            newer_fields: newer::described_newer(doc.clone()),
            ..Capabilities::operations_of(doc)
        }
    }

    /// What the embedded description as `cfgctl serve` serves it describes (see
    /// `spec::is_served_embedded`): its operations, and no newer field.
    pub fn served_embedded() -> Capabilities {
        Capabilities {
            ops: crate::api::spec::served_embedded_operations(),
            described: true,
            newer_fields: BTreeSet::new(),
        }
    }

    /// The operations a swagger document describes, without its newer fields (worked out
    /// apart, later: see `state`).
    pub fn operations_of(doc: &Value) -> Capabilities {
        Capabilities {
            ops: crate::api::spec::described_operations(doc),
            described: true,
            newer_fields: BTreeSet::new(),
        }
    }

    pub fn has(&self, kind: Kind, op: Op) -> bool {
        self.ops.get(&kind).is_some_and(|o| o.has(op))
    }

    /// The state of the kind can be read without one request per resource: a list, or the
    /// singleton's read.
    pub fn can_read_state(&self, kind: Kind) -> bool {
        if kind.def().singleton {
            self.has(kind, Op::Read)
        } else {
            self.has(kind, Op::List)
        }
    }
}
