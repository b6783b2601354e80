//! The base URL policy (https, or plain http to loopback only unless `--insecure-http`) and
//! request URLs: pure, unit-tested.

use std::net::IpAddr;

use reqwest::Url;

use super::ClientError;

/// True for `localhost` and loopback addresses, where plain http carries nothing off the machine.
pub fn is_loopback_host(host: &str) -> bool {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    bare.eq_ignore_ascii_case("localhost")
        || bare.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Checks and normalises a base URL (no trailing slash, http(s) only, http only to loopback
/// unless allowed).
pub fn parse_base_url(raw: &str, insecure_http: bool) -> Result<Url, ClientError> {
    let invalid = |reason: &str| ClientError::InvalidUrl {
        // Never the URL as given: its user info or query may hold the token.
        url: crate::util::output::display_url(raw),
        reason: reason.to_string(),
    };
    if let Some(suggested) = with_scheme(raw) {
        return Err(ClientError::NoScheme { suggested });
    }
    let url = Url::parse(raw.trim()).map_err(|e| invalid(&e.to_string()))?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err(invalid(
            "credentials in the URL are not allowed; use --token",
        ));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(invalid("the URL must not have a query or fragment"));
    }
    let host = url
        .host_str()
        .ok_or_else(|| invalid("no host"))?
        .to_string();
    // The API's own documentation writes its URLs with `/api/v1`; cfgctl adds that path
    // itself, so a base holding it would be asked for `/api/v1/api/v1/...` (a 404).
    let path = url.path().trim_end_matches('/');
    let api = crate::api::wire::API_PREFIX
        .rsplit_once('/')
        .map_or(crate::api::wire::API_PREFIX, |(root, _)| root);
    let holds_api = path
        .match_indices(api)
        .map(|(at, _)| at)
        .find(|&at| matches!(path.as_bytes().get(at + api.len()), None | Some(b'/')));
    if let Some(at) = holds_api {
        let mut base = url.clone();
        base.set_path(&path[..at]);
        let base = crate::util::output::display_url(base.as_str());
        return Err(ClientError::ApiPath {
            base: base.trim_end_matches('/').to_string(),
        });
    }
    match url.scheme() {
        "https" => {}
        "http" if is_loopback_host(&host) || insecure_http => {}
        "http" => return Err(ClientError::InsecureHttp { host }),
        other => return Err(invalid(&format!("unsupported scheme {other}"))),
    }
    Ok(url)
}

/// For a URL written without `scheme://` (`tenant.example.com`, `localhost:8080`, which the
/// URL parser calls relative, or reads `localhost` as the scheme), the URL meant, as it may be
/// shown: https, or http for a loopback host (the emulator).
fn with_scheme(raw: &str) -> Option<String> {
    let raw = raw.trim();
    if raw.is_empty() || raw.contains("://") {
        return None;
    }
    let url = Url::parse(&format!("https://{raw}")).ok()?;
    let host = url.host_str()?;
    let shown = crate::util::output::display_url(url.as_str());
    Some(if is_loopback_host(host) {
        shown.replacen("https://", "http://", 1)
    } else {
        shown
    })
}

/// `base` + `path` + `?query`: the parsed base with only its path and query set (a request
/// does not parse its scheme and host again); the same URL as parsing the joined text
/// (tested). Pure.
pub fn request_url(base: &Url, path: &str, query: &str) -> Url {
    let mut url = base.clone();
    let prefix = base.path().trim_end_matches('/');
    url.set_path(&format!("{prefix}{path}"));
    url.set_query((!query.is_empty()).then_some(query));
    url
}
