//! Reading a target: its capabilities (swagger.json, once) and its current state (every list,
//! all pages, all kinds concurrently; the singleton by its read). Never one request per
//! resource.

use futures_util::future::try_join_all;

use crate::client::{Client, ClientError, ListError};
use crate::plan::{Capabilities, Current, Expected, Object};
use crate::registry::{Address, Kind, KINDS};
use crate::wire::ListQuery;

/// What was read from the target.
#[derive(Debug)]
pub struct Fetched {
    pub caps: Capabilities,
    pub current: Current,
    pub warnings: Vec<String>,
}

/// Reads the target's description; the full registry (with a warning) when it has none.
pub async fn capabilities(client: &Client) -> Result<(Capabilities, Option<String>), ClientError> {
    match client.swagger().await {
        Ok(doc) if doc.get("paths").is_some() => Ok((Capabilities::from_swagger(&doc), None)),
        Ok(_) => Ok((
            Capabilities::assumed_full(),
            Some("the target's swagger.json has no paths: assuming the full API".into()),
        )),
        // Authentication problems are not a missing description: stop here.
        Err(e) if matches!(e.status(), Some(401 | 403)) => Err(e),
        Err(e) => Ok((
            Capabilities::assumed_full(),
            Some(format!(
                "cannot read the target's swagger.json ({e}): assuming the full API"
            )),
        )),
    }
}

/// The page size asked for: the emulator's maximum. A server that honours less sends less
/// (`page.max_size` is a preference), so a slow round trip costs as few pages as the target
/// allows.
pub const LIST_PAGE_SIZE: u64 = 1000;

/// The filters of a full read of a kind's list (`include_dashboard_json` where lists omit
/// documents), asking for the largest pages.
pub fn list_filters(kind: Kind) -> ListQuery {
    let mut q = ListQuery {
        max_size: Some(LIST_PAGE_SIZE),
        ..ListQuery::default()
    };
    if kind.def().embedded_json.iter().any(|e| e.omitted_in_lists) {
        q.filters.insert(
            crate::wire::INCLUDE_DASHBOARD_JSON.into(),
            vec!["true".into()],
        );
    }
    q
}

/// One listed object: its slug as the object gives it (`None` for the singleton), or why it
/// cannot be addressed.
type Listed = (Result<Option<String>, String>, Object);

async fn read_kind(
    client: &Client,
    kind: Kind,
    expected: &Expected,
) -> Result<(Kind, Vec<Listed>), ClientError> {
    if kind.def().singleton {
        let one = client.read(kind, None).await?;
        return Ok((
            kind,
            one.iter()
                .map(|v| (Ok(None), Object::new(kind, v)))
                .collect(),
        ));
    }
    // Each page is parsed, normalised and digested on a blocking thread while the next page is
    // on its way; only the object's text and digest are kept.
    let mut reading = Vec::new();
    let pages = client
        .list_pages(kind, &list_filters(kind), |page| {
            let expected = expected.clone();
            reading.push(tokio::task::spawn_blocking(move || {
                read_page(kind, &page, &expected)
            }));
            Ok(())
        })
        .await
        .map_err(|e| bad_page(kind, e))?;
    let mut items = Vec::new();
    for page in reading {
        let page = page
            .await
            .map_err(|e| bad_page(kind, ListError::Page(format!("reading a page failed: {e}"))))?
            .map_err(|reason| bad_page(kind, ListError::Page(reason)))?;
        items.extend(page);
    }
    tracing::info!(kind = kind.name(), resources = items.len(), pages, "listed");
    Ok((kind, items))
}

fn bad_page(kind: Kind, e: ListError) -> ClientError {
    match e {
        ListError::Client(e) => e,
        ListError::Page(reason) => ClientError::BadResponse {
            method: reqwest::Method::GET,
            path: crate::wire::collection_path(kind),
            reason,
        },
    }
}

/// The objects of one list page.
fn read_page(
    kind: Kind,
    items: &[bytes::Bytes],
    expected: &Expected,
) -> Result<Vec<Listed>, String> {
    use rayon::prelude::*;
    // The items on all cores (a page of a thousand dashboards is a lot of work for one); each
    // parsed tree is dropped as soon as its object is made.
    items
        .par_iter()
        .map(|raw| {
            let (mut object, value) =
                Object::listed(kind, raw).map_err(|e| format!("an item is not JSON ({e})"))?;
            let slug = slug(kind, &value);
            if let Ok(slug) = &slug {
                object.release_if_expected(&Address::new(kind, slug.clone()), expected);
            }
            Ok((slug, object))
        })
        .collect()
}

/// The slug of a listed object, or why it cannot be addressed.
fn slug(kind: Kind, value: &serde_json::Value) -> Result<Option<String>, String> {
    match crate::registry::object_slug(kind, value).as_deref() {
        Some(s) if !s.is_empty() && !crate::wire::is_usable_segment(s) => Err(format!(
            "the target lists a {kind} that cfgctl cannot address: {}; it is left alone (neither compared, updated nor deleted)",
            crate::wire::unusable_segment_reason(s)
        )),
        Some(s) if !s.is_empty() => Ok(Some(s.to_string())),
        _ => Err(format!("the target listed a {kind} without a slug; skipped")),
    }
}

/// Reads capabilities and every readable kind's resources.
pub async fn fetch(client: &Client) -> Result<Fetched, ClientError> {
    fetch_expecting(client, &Expected::default()).await
}

/// [`fetch`], letting go of the text of each object its manifest describes exactly, as soon as
/// the manifests' digests are known (see [`Expected`]).
pub async fn fetch_expecting(client: &Client, expected: &Expected) -> Result<Fetched, ClientError> {
    let (caps, warning) = capabilities(client).await?;
    let mut warnings: Vec<String> = warning.into_iter().collect();
    let readable: Vec<Kind> = KINDS
        .iter()
        .map(|d| d.kind)
        .filter(|k| caps.can_read_state(*k))
        .collect();
    // The first kind that cannot be read ends the reading: the others are dropped rather than
    // waited for (a rate-limited target may have paused them for a long `Retry-After`).
    let results = try_join_all(readable.iter().map(|k| read_kind(client, *k, expected))).await?;
    let mut current = Current::default();
    for (kind, items) in results {
        current.known.insert(kind);
        for (slug, object) in items {
            match slug {
                Ok(slug) => {
                    current.resources.insert(Address::new(kind, slug), object);
                }
                Err(warning) => warnings.push(warning),
            }
        }
    }
    for def in KINDS.iter().filter(|d| !caps.can_read_state(d.kind)) {
        tracing::info!(kind = def.name, "the target cannot list this kind");
    }
    Ok(Fetched {
        caps,
        current,
        warnings,
    })
}
