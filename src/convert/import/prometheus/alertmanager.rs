//! An Alertmanager configuration to Notifiers (one per receiver integration) and one
//! NotificationPolicy (`routes`). Every credential is written as `${env:NAME}` with a name
//! made from the receiver, the integration and the field (`AM_TEAM_X_PAGER_PAGERDUTY_SERVICE_KEY`);
//! its literal is registered as a secret the moment it is read, so no output can carry it, and
//! it is never copied into a manifest or the report.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::super::{ImportError, Report, Slugs};
use super::config::Config;
use super::credentials::{strip_copies, Credentials};
use super::routes;
use super::Kinds;
use crate::api::registry::Kind;

/// Who owns the NotificationPolicy.
#[derive(Clone, Debug)]
pub enum PolicyOwner {
    Team(String),
    Bucket(String),
}

/// The manifests an Alertmanager configuration becomes.
pub struct Mapped {
    pub notifiers: Vec<(Kind, Value)>,
    pub policy: (Kind, Value),
}

/// One receiver integration type: the Alertmanager list, the Notifier's field, the fields
/// Alertmanager itself keeps secret, and whether it sends resolved notifications by default.
struct Integration {
    list: &'static str,
    field: &'static str,
    secrets: &'static [&'static str],
    send_resolved: bool,
    /// Global settings that fill a missing field: (global key, field).
    globals: &'static [(&'static str, &'static str)],
}

const INTEGRATIONS: &[Integration] = &[
    Integration {
        list: "slack_configs",
        field: "slack",
        secrets: &["api_url"],
        send_resolved: false,
        globals: &[("slack_api_url", "api_url")],
    },
    Integration {
        list: "pagerduty_configs",
        field: "pagerduty",
        secrets: &["service_key", "routing_key"],
        send_resolved: true,
        globals: &[("pagerduty_url", "url")],
    },
    Integration {
        list: "email_configs",
        field: "email",
        secrets: &["auth_password", "auth_secret"],
        send_resolved: false,
        globals: &[],
    },
    Integration {
        list: "webhook_configs",
        field: "webhook",
        secrets: &["url"],
        send_resolved: true,
        globals: &[],
    },
    Integration {
        list: "opsgenie_configs",
        field: "ops_genie",
        secrets: &["api_key"],
        send_resolved: true,
        globals: &[
            ("opsgenie_api_key", "api_key"),
            ("opsgenie_api_url", "api_url"),
        ],
    },
    Integration {
        list: "victorops_configs",
        field: "victor_ops",
        secrets: &["api_key", "routing_key"],
        send_resolved: true,
        globals: &[
            ("victorops_api_key", "api_key"),
            ("victorops_api_url", "api_url"),
        ],
    },
];

/// Fields of `http_config` that are credentials (with their `_file` forms).
const HTTP_SECRETS: &[&str] = &["password", "bearer_token", "credentials"];

/// A variable name: upper-snake of its parts (`AM_TEAM_X_PAGER_SLACK_API_URL`).
fn variable(parts: &[&str]) -> String {
    let mut out = String::from("AM");
    for part in parts {
        out.push('_');
        let mut last = true;
        for c in part.chars() {
            if c.is_ascii_alphanumeric() {
                out.push(c.to_ascii_uppercase());
                last = false;
            } else if !last {
                out.push('_');
                last = true;
            }
        }
        while out.ends_with('_') {
            out.pop();
        }
    }
    out
}

/// Notifiers and the policy.
pub fn map(
    config: &Config,
    kinds: Kinds,
    owner: &PolicyOwner,
    slug: &str,
    report: &mut Report,
) -> Result<Mapped, ImportError> {
    let mut credentials = Credentials::default();
    // Each receiver's own slug is kept for it (a suffixed slug is never another's own).
    let receivers: Vec<&str> = config
        .get("/receivers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| r.get("name")?.as_str())
        .collect();
    let mut slugs = Slugs::reserving(receivers);
    let mut notifiers = Vec::new();
    let mut by_receiver: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let n = config
        .get("/receivers")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    for i in 0..n {
        let at = format!("/receivers/{i}");
        let name = config
            .get(&format!("{at}/name"))
            .and_then(Value::as_str)
            .unwrap_or("receiver")
            .to_string();
        let made = receiver(
            config,
            &at,
            &name,
            kinds.notifier,
            &mut slugs,
            &mut credentials,
            report,
        );
        by_receiver.insert(name, made.iter().map(|(s, _)| s.clone()).collect());
        notifiers.extend(made.into_iter().map(|(_, spec)| (kinds.notifier, spec)));
    }
    for (_, spec) in &mut notifiers {
        strip_copies(spec, &credentials.literals, &config.label, report);
    }
    for (key, what) in [
        ("inhibit_rules", "inhibit rule"),
        ("templates", "notification template file"),
        ("mute_time_intervals", "mute time interval"),
        ("time_intervals", "time interval"),
    ] {
        let count = config
            .get(&format!("/{key}"))
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        for j in 0..count {
            report.note(
                &config.source(&format!("/{key}/{j}")),
                format!("{what} {}", j + 1),
                "has no counterpart in the API: not imported",
            );
        }
    }
    note_unused_globals(config, report);
    let routes = routes::policy_routes(config, &by_receiver, report)?;
    let mut spec = Map::new();
    spec.insert("slug".into(), slug.into());
    spec.insert("name".into(), "Alertmanager routes".into());
    match owner {
        PolicyOwner::Team(t) => spec.insert("team_slug".into(), t.clone().into()),
        PolicyOwner::Bucket(b) => spec.insert("bucket_slug".into(), b.clone().into()),
    };
    spec.insert("routes".into(), routes);
    Ok(Mapped {
        notifiers,
        policy: (kinds.policy, Value::Object(spec)),
    })
}

/// Global settings no integration takes (the e-mail server's, say: the API sends e-mail
/// itself) are reported; their values never are.
fn note_unused_globals(config: &Config, report: &mut Report) {
    let Some(Value::Object(global)) = config.get("/global") else {
        return;
    };
    for key in global.keys() {
        let stem = key.strip_suffix("_file").unwrap_or(key);
        let used = INTEGRATIONS
            .iter()
            .any(|i| i.globals.iter().any(|(g, _)| *g == stem));
        if !used {
            report.note(
                &config.source(&format!("/global/{key}")),
                "global",
                format!("`{key}` has no counterpart in the API: not imported"),
            );
        }
    }
}

/// The Notifiers of one receiver, with their slugs: one per integration config, or one that
/// discards when the receiver has none.
fn receiver(
    config: &Config,
    at: &str,
    name: &str,
    kind: Kind,
    slugs: &mut Slugs,
    credentials: &mut Credentials,
    report: &mut Report,
) -> Vec<(String, Value)> {
    let subject = format!("receiver {name}");
    let Some(Value::Object(members)) = config.get(at) else {
        return Vec::new();
    };
    let mut configs: Vec<(&Integration, String)> = Vec::new();
    for (key, value) in members {
        if key == "name" {
            continue;
        }
        let Some(integration) = INTEGRATIONS.iter().find(|i| i.list == key) else {
            report.note(
                &config.source(&format!("{at}/{key}")),
                &subject,
                format!(
                    "`{key}` has no counterpart among the Notifier's integrations: not imported"
                ),
            );
            continue;
        };
        for j in 0..value.as_array().map_or(0, Vec::len) {
            configs.push((integration, format!("{at}/{key}/{j}")));
        }
    }
    if configs.is_empty() {
        let slug = slugs.unique(name);
        let spec = json!({"slug": slug, "name": name, "discard": true});
        return vec![(slug, spec)];
    }
    let several = configs.len() > 1;
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    let mut out = Vec::new();
    for (integration, pointer) in configs {
        let nth = seen.entry(integration.field).or_default();
        *nth += 1;
        let kind_part = match *nth {
            1 => integration.field.to_string(),
            n => format!("{}-{n}", integration.field),
        };
        let (slug, display) = if several {
            (
                slugs.unique(&format!("{name}-{kind_part}")),
                format!("{name} ({kind_part})"),
            )
        } else {
            (slugs.unique(name), name.to_string())
        };
        let ctx = Integ {
            config,
            integration,
            pointer: &pointer,
            receiver: name,
            part: &kind_part,
            subject: &subject,
            kind,
        };
        let spec = ctx.notifier(&slug, &display, credentials, report);
        out.push((slug, spec));
    }
    out
}

/// One integration config being mapped.
struct Integ<'a> {
    config: &'a Config,
    integration: &'a Integration,
    pointer: &'a str,
    receiver: &'a str,
    part: &'a str,
    subject: &'a str,
    kind: Kind,
}

impl Integ<'_> {
    fn notifier(
        &self,
        slug: &str,
        display: &str,
        credentials: &mut Credentials,
        report: &mut Report,
    ) -> Value {
        let known = super::super::properties_of(self.kind, &[self.integration.field]);
        let mut body = Map::new();
        let mut send_resolved = self.integration.send_resolved;
        let members = self
            .config
            .get(self.pointer)
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        for (key, value) in &members {
            let at = format!("{}/{key}", self.pointer);
            let stem = key.strip_suffix("_file").unwrap_or(key);
            if key == "send_resolved" {
                send_resolved = value.as_bool().unwrap_or(send_resolved);
            } else if key == "http_config" {
                if let Some(http) = self.http_config(&at, credentials, report) {
                    body.insert("http_config".into(), http);
                }
            } else if self.is_secret(stem) && known.contains(stem) {
                let name = variable(&[self.receiver, self.part, stem]);
                let holds = format!(
                    "{} {} of receiver `{}`",
                    self.integration.field,
                    held(key),
                    self.receiver
                );
                let reference = credentials.reference(self.config, &at, name, holds, report);
                self.note_shown(&at, stem, &reference, report);
                body.insert(stem.to_string(), reference);
            } else if known.contains(key.as_str()) && !key.ends_with("_file") {
                body.insert(key.clone(), convert(self.integration.field, key, value));
            } else {
                report.note(
                    &self.config.source(&at),
                    self.subject,
                    format!(
                        "{} `{key}` has no counterpart in the Notifier: not imported",
                        self.integration.field
                    ),
                );
            }
        }
        self.globals(&mut body, credentials, report);
        let mut spec = Map::new();
        spec.insert("slug".into(), slug.into());
        spec.insert("name".into(), display.into());
        if !send_resolved {
            spec.insert("skip_resolved".into(), true.into());
        }
        spec.insert(self.integration.field.into(), Value::Object(body));
        Value::Object(spec)
    }

    /// A credential written as a reference in a field the API keeps in clear (`webhook.url`):
    /// the plan resolves it and shows its value, which the report says.
    fn note_shown(&self, at: &str, field: &str, reference: &Value, report: &mut Report) {
        let path = format!("{}.{field}", self.integration.field);
        if self.kind.def().secrets.iter().any(|s| *s == path) {
            return;
        }
        let shown = reference.as_str().unwrap_or_default();
        report.note(
            &self.config.source(at),
            self.subject,
            format!("{} `{field}` is a credential written as `{shown}`, but the API keeps `{path}` in clear: every plan (and pull-request comment) shows the variable's value; carry the credential in `http_config` (`bearer_token`, `basic_auth`) instead", self.integration.field),
        );
    }

    fn is_secret(&self, field: &str) -> bool {
        self.integration.secrets.contains(&field)
            || self
                .kind
                .def()
                .secrets
                .iter()
                .any(|s| *s == format!("{}.{field}", self.integration.field))
    }

    /// Global settings the config leaves to `global:` (a credential as its own variable).
    fn globals(
        &self,
        body: &mut Map<String, Value>,
        credentials: &mut Credentials,
        report: &mut Report,
    ) {
        for (global, field) in self.integration.globals {
            if body.contains_key(*field) {
                continue;
            }
            for key in [global.to_string(), format!("{global}_file")] {
                let at = format!("/global/{key}");
                if self.config.get(&at).is_none() {
                    continue;
                }
                let value = if self.is_secret(field) {
                    let holds = format!("global {}", held(&key));
                    credentials.reference(
                        self.config,
                        &at,
                        variable(&["global", global]),
                        holds,
                        report,
                    )
                } else {
                    self.config.get(&at).cloned().unwrap_or(Value::Null)
                };
                body.insert(field.to_string(), value);
                break;
            }
        }
    }

    fn http_config(
        &self,
        at: &str,
        credentials: &mut Credentials,
        report: &mut Report,
    ) -> Option<Value> {
        let members = self.config.get(at)?.as_object()?;
        let mut out = Map::new();
        for (key, value) in members {
            let here = format!("{at}/{key}");
            match (key.as_str(), value) {
                ("basic_auth" | "authorization", Value::Object(inner)) => {
                    self.http_auth(key, &here, inner, &mut out, credentials, report);
                }
                ("bearer_token" | "bearer_token_file", _) => {
                    let name = variable(&[self.receiver, self.part, "bearer_token"]);
                    let holds =
                        format!("http_config {} of receiver `{}`", held(key), self.receiver);
                    out.insert(
                        "bearer_token".into(),
                        credentials.reference(self.config, &here, name, holds, report),
                    );
                }
                ("proxy_url", Value::String(url)) => {
                    let url = match without_password(url) {
                        Some(stripped) => {
                            report.note(
                                &self.config.source(&here),
                                self.subject,
                                "http_config `proxy_url`: its password was left out (the API keeps `proxy_url` in clear, so every plan would show it); give the proxy its credential another way",
                            );
                            stripped
                        }
                        None => url.clone(),
                    };
                    out.insert("proxy_url".into(), url.into());
                }
                ("tls_config", Value::Object(tls))
                    if tls.keys().all(|k| k == "insecure_skip_verify") =>
                {
                    out.insert("tls_config".into(), value.clone());
                }
                _ => report.note(
                    &self.config.source(&here),
                    self.subject,
                    format!("http_config `{key}` has no counterpart: not imported"),
                ),
            }
        }
        (!out.is_empty()).then_some(Value::Object(out))
    }

    /// `basic_auth` (username, password) or `authorization` (a Bearer credential) of an
    /// `http_config`: the credential as a reference, anything else reported.
    fn http_auth(
        &self,
        key: &str,
        here: &str,
        inner: &Map<String, Value>,
        out: &mut Map<String, Value>,
        credentials: &mut Credentials,
        report: &mut Report,
    ) {
        let mut auth = Map::new();
        for (k, v) in inner {
            let stem = k.strip_suffix("_file").unwrap_or(k);
            let p = format!("{here}/{k}");
            let bearer_type = key == "authorization"
                && k == "type"
                && v.as_str().is_none_or(|t| t.eq_ignore_ascii_case("bearer"));
            if HTTP_SECRETS.contains(&stem) {
                let name = variable(&[self.receiver, self.part, key, stem]);
                let holds = format!(
                    "http_config {} of receiver `{}`",
                    held(&format!("{key}.{k}")),
                    self.receiver
                );
                let reference = credentials.reference(self.config, &p, name, holds, report);
                if key == "basic_auth" {
                    auth.insert("password".into(), reference);
                } else {
                    out.insert("bearer_token".into(), reference);
                }
            } else if key == "basic_auth" && k == "username" {
                auth.insert("username".into(), v.clone());
            } else if !bearer_type {
                report.note(
                    &self.config.source(&p),
                    self.subject,
                    format!("http_config `{key}.{k}` has no counterpart: not imported"),
                );
            }
        }
        if !auth.is_empty() {
            out.insert("basic_auth".into(), Value::Object(auth));
        }
    }
}

/// What a credential's variable holds, by the key it replaces: the value itself, or for a
/// `*_file` key the contents of the file Alertmanager read it from.
fn held(key: &str) -> String {
    match key.strip_suffix("_file") {
        Some(stem) => format!("`{stem}` (the contents of the file `{key}` named)"),
        None => format!("`{key}`"),
    }
}

/// A value as the Notifier takes it: Opsgenie's responders name their type
/// `responder_type` (upper case); anything else as it is.
fn convert(field: &str, key: &str, value: &Value) -> Value {
    if field == "ops_genie" && key == "responders" {
        if let Value::Array(items) = value {
            return Value::Array(
                items
                    .iter()
                    .map(|r| {
                        let mut r = r.as_object().cloned().unwrap_or_default();
                        if let Some(Value::String(t)) = r.shift_remove("type") {
                            r.insert("responder_type".into(), t.to_ascii_uppercase().into());
                        }
                        Value::Object(r)
                    })
                    .collect(),
            );
        }
    }
    value.clone()
}

/// `url` without the password of its user information (`http://user:pass@host` ->
/// `http://user@host`), the password registered as a secret; `None` when it has none.
fn without_password(url: &str) -> Option<String> {
    let start = url.find("://")? + 3;
    let rest = &url[start..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let at = rest[..authority_end].rfind('@')?;
    let colon = rest[..at].find(':')?;
    crate::util::output::register_secret(&crate::manifest::unescape(&rest[colon + 1..at]));
    Some(format!(
        "{}{}{}",
        &url[..start],
        &rest[..colon],
        &rest[at..]
    ))
}
