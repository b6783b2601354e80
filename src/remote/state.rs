//! Reading a target: its capabilities (swagger.json, once) and its current state (every list,
//! all pages, all kinds concurrently; the singleton by its read). Never one request per
//! resource.

use std::collections::BTreeMap;
use std::sync::{mpsc, Arc, OnceLock};

use futures_util::future::try_join_all;

use crate::api::registry::{Address, Kind};
use crate::api::wire::ListQuery;
use crate::plan::{Capabilities, Current, Expected, Object};
use crate::remote::client::{Client, ClientError, ListError, Swagger};

/// What was read from the target.
#[derive(Debug)]
pub struct Fetched {
    pub caps: Capabilities,
    pub current: Current,
    pub warnings: Vec<String>,
    /// The hash of every answer the above was made from (see [`Answers`]).
    pub answers: Answers,
}

/// The BLAKE3 hash of what a reading of the target was made from: the description (or why it
/// could not be read), then each kind read in registry order, page by page, with its listed
/// objects' text (see `hash_page`; the page tokens are left out). Equal answers read to an
/// equal [`Fetched`]: the no-change memo (`memo`) keys on them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Answers(pub [u8; 32]);

/// A reading of the target whose objects are not worked out yet: their texts, page by page, and
/// the hash of the answers. [`Listing::finish`] works them out; a caller that learns from the
/// hash alone that it needs nothing more (a remembered no-change plan) never does.
#[derive(Debug)]
pub struct Listing {
    caps: Capabilities,
    warnings: Vec<String>,
    /// The kinds whose list the target refused, with its answer (see [`refusal`]).
    refused: BTreeMap<Kind, String>,
    /// Per kind: its pages (kept, or being worked out), or the singleton's answer.
    kinds: Vec<(Kind, Vec<Page>, Option<serde_json::Value>)>,
    pub answers: Answers,
}

/// Whether a deferred reading ([`list_deferred_until`]) works its pages out as they arrive:
/// not until [`WorkOut::start`], which the caller calls once it knows it will plan in full (no
/// remembered plan answers it). The pages that arrive from then on are worked out on all cores
/// while the others download; [`Listing::finish`] works out only those that came before.
#[derive(Clone, Debug, Default)]
pub struct WorkOut(Arc<OnceLock<Expected>>);

impl WorkOut {
    /// From now on, pages are worked out as they arrive (letting go of the text of each object
    /// `expected` describes exactly, once its digests are set).
    pub fn start(&self, expected: &Expected) {
        let _ = self.0.set(expected.clone());
    }
}

/// A page of a deferred reading: its body kept, or its objects being worked out on the rayon
/// pool (with the page's own next token when the walk did not follow that one: see
/// [`Listing::finish`]).
#[derive(Debug)]
enum Page {
    Kept(bytes::Bytes),
    Working(mpsc::Receiver<PageRead>),
}

/// The size up to which a deferred page is worked out at once (see [`Page::new`]).
const SMALL_PAGE: usize = 4096;

/// A page's objects, with its next token when the walk did not follow that one.
type PageRead = Result<(Option<String>, Vec<Listed>), String>;

impl Page {
    /// The page's body, worked out on another thread when `work` has started; a page the walk
    /// has split already (`items`) is not split again.
    fn new(
        kind: Kind,
        body: &bytes::Bytes,
        items: Option<Vec<bytes::Bytes>>,
        work: &WorkOut,
    ) -> Page {
        let Some(expected) = work.0.get().cloned() else {
            return Page::Kept(body.clone());
        };
        let (done, working) = mpsc::sync_channel(1);
        let small = body.len() <= SMALL_PAGE;
        let body = body.clone();
        let work = move || {
            let worked = match items {
                Some(items) => read_page(kind, items, &expected).map(|l| (None, l)),
                None => crate::api::wire::split_list_page_items(kind, &body)
                    .and_then(|(next, items)| Ok((Some(next), read_page(kind, items, &expected)?))),
            };
            let _ = done.send(worked);
        };
        // A page of a few objects (an empty kind's) on the runtime's blocking threads: on the
        // rayon pool it would wait behind the manifests' load, and what the target holds
        // (`plan::Listed`: a lean load keeps the specs it will send) would come last. Full
        // pages wait there, their texts not yet worked out while the digests are unknown.
        if small {
            tokio::task::spawn_blocking(work);
        } else {
            rayon::spawn(work);
        }
        Page::Working(working)
    }

    /// The page's objects, and its next token as the page itself gives it (`None`: the one the
    /// walk followed).
    fn finish(self, kind: Kind, expected: &Expected) -> PageRead {
        match self {
            Page::Kept(body) => {
                let (next, page) = crate::api::wire::split_list_page_items(kind, &body)?;
                Ok((Some(next), read_page(kind, page, expected)?))
            }
            Page::Working(working) => working
                .recv()
                .map_err(|_| "reading a page failed".to_string())?,
        }
    }
}

impl Listing {
    /// The reading, every object worked out (on all cores), letting go of the text of each
    /// object its manifest describes exactly.
    pub fn finish(self, expected: &Expected) -> Result<Fetched, ClientError> {
        let mut results = Vec::with_capacity(self.kinds.len());
        for (kind, pages, singleton) in self.kinds {
            let mut items = Vec::new();
            if kind.def().singleton {
                items = singleton_items(kind, singleton.as_ref());
            }
            let last = pages.len().saturating_sub(1);
            for (i, page) in pages.into_iter().enumerate() {
                let bad = |reason: String| bad_page(kind, ListError::Page(reason));
                let (next, page) = page.finish(kind, expected).map_err(bad)?;
                // The walk went on exactly while the pages said there was more.
                if next.is_some_and(|next| next.is_empty() != (i == last)) {
                    return Err(bad(
                        "its pages read through do not end where they were followed".into(),
                    ));
                }
                items.extend(page);
            }
            results.push((kind, items));
        }
        Ok(assemble(
            self.caps,
            self.warnings,
            results,
            self.refused,
            self.answers,
        ))
    }
}

/// Reads the target's description; the full registry (with a warning) when it has none.
pub async fn capabilities(client: &Client) -> Result<(Capabilities, Option<String>), ClientError> {
    let (described, _) = described(client).await?;
    Ok(described.finish())
}

/// What the description says: the operations at once (all a reading needs to start), the
/// fields of a newer API worked out from the document later (see [`Described::finish`]).
struct Described {
    caps: Capabilities,
    warning: Option<String>,
    doc: Option<serde_json::Value>,
}

impl Described {
    fn finish(mut self) -> (Capabilities, Option<String>) {
        if let Some(doc) = self.doc.take() {
            self.caps.newer_fields = crate::plan::newer::described_newer(doc);
        }
        (self.caps, self.warning)
    }
}

/// The target's description, with the hash of it as read (of nothing when there was none).
async fn described(client: &Client) -> Result<(Described, blake3::Hash), ClientError> {
    // The embedded description (a parse of its own) is wanted by what follows: made ready on
    // another thread while the target's is on its way (not waited for: its users wait for it).
    drop(tokio::task::spawn_blocking(|| {
        crate::api::spec::Description::shared_embedded();
    }));
    let doc = match client.swagger().await {
        // Known by its bytes: what reading it would give, without reading it.
        Ok(Swagger::ServedEmbedded(hash)) => {
            tracing::debug!("the target serves the embedded description: not read");
            let described = Described {
                caps: Capabilities::served_embedded(),
                warning: None,
                doc: None,
            };
            return Ok((described, hash));
        }
        Ok(Swagger::Read(doc)) => Ok(doc),
        Err(e) => Err(e),
    };
    // A `Value` always serialises.
    let text = doc
        .as_ref()
        .map(|d| serde_json::to_vec(d).unwrap_or_default())
        .unwrap_or_default();
    let described = match doc {
        Ok(doc) if doc.get("paths").is_some() => Described {
            caps: Capabilities::operations_of(&doc),
            warning: None,
            doc: Some(doc),
        },
        Ok(_) => Described {
            caps: Capabilities::assumed_full(),
            warning: Some("the target's swagger.json has no paths: assuming the full API".into()),
            doc: None,
        },
        // Authentication problems are not a missing description: stop here.
        Err(e) if matches!(e.status(), Some(401 | 403)) => return Err(e),
        Err(e) => Described {
            caps: Capabilities::assumed_full(),
            warning: Some(format!(
                "cannot read the target's swagger.json ({e}): assuming the full API"
            )),
            doc: None,
        },
    };
    Ok((described, blake3::hash(&text)))
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
            crate::api::wire::INCLUDE_DASHBOARD_JSON.into(),
            vec!["true".into()],
        );
    }
    q
}

/// One listed object: its slug as the object gives it (`None` for the singleton), or why it
/// cannot be addressed.
type Listed = (Result<Option<String>, String>, Object);

/// One kind's reading: its objects worked out, or (deferred) its pages and the singleton's
/// answer; with the hash of what was listed.
enum KindRead {
    Done(Vec<Listed>),
    Deferred(Vec<Page>, Option<serde_json::Value>),
    /// The target refused to list the kind: its answer.
    Refused(String),
}

/// How a reading works out its objects.
#[derive(Clone, Copy)]
enum Mode<'a> {
    /// As their pages arrive, letting go of what is as expected.
    Eager(&'a Expected),
    /// Not before the caller says so ([`WorkOut`]).
    Deferred(&'a WorkOut),
}

/// Reads a kind; its objects are worked out as their pages arrive, or deferred (`mode`).
async fn read_kind(
    client: &Client,
    kind: Kind,
    mode: Mode<'_>,
) -> Result<(Kind, KindRead, blake3::Hash), ClientError> {
    let expected = match mode {
        Mode::Eager(expected) => Some(expected),
        Mode::Deferred(_) => None,
    };
    let mut hash = blake3::Hasher::new();
    hash.update(kind.name().as_bytes());
    if kind.def().singleton {
        let one = match client.read(kind, None).await {
            Ok(one) => one,
            Err(e) => return refused(kind, &e, hash).ok_or(e),
        };
        // A `Value` always serialises.
        let text = one
            .as_ref()
            .map(|v| serde_json::to_vec(v).unwrap_or_default());
        hash_item(&mut hash, text.as_deref().unwrap_or(b"none"));
        let read = match expected {
            Some(_) => KindRead::Done(singleton_items(kind, one.as_ref())),
            None => KindRead::Deferred(Vec::new(), one),
        };
        return Ok((kind, read, hash.finalize()));
    }
    // Each page is parsed, normalised and digested on a blocking thread while the next page is
    // on its way; only the object's text and digest are kept.
    let mut reading = Vec::new();
    let mut kept = Vec::new();
    let listed = client
        .list_pages(
            kind,
            &list_filters(kind),
            expected.is_some(),
            |body, page| {
                hash_page(&mut hash, kind, body, page.as_deref());
                match (expected, page) {
                    (Some(expected), Some(page)) => {
                        let expected = expected.clone();
                        reading.push(tokio::task::spawn_blocking(move || {
                            read_page(kind, page, &expected)
                        }));
                    }
                    (_, page) => {
                        if let Mode::Deferred(work) = mode {
                            kept.push(Page::new(kind, body, page, work));
                        }
                    }
                }
                Ok(())
            },
        )
        .await;
    let pages = match listed {
        Ok(pages) => pages,
        Err(ListError::Client(e)) => return refused(kind, &e, hash).ok_or(e),
        Err(e) => return Err(bad_page(kind, e)),
    };
    if expected.is_none() {
        return Ok((kind, KindRead::Deferred(kept, None), hash.finalize()));
    }
    let mut items = Vec::new();
    for page in reading {
        let page = page
            .await
            .map_err(|e| bad_page(kind, ListError::Page(format!("reading a page failed: {e}"))))?
            .map_err(|reason| bad_page(kind, ListError::Page(reason)))?;
        items.extend(page);
    }
    tracing::info!(kind = kind.name(), resources = items.len(), pages, "listed");
    Ok((kind, KindRead::Done(items), hash.finalize()))
}

/// One object's text into a kind's hash, its length first (so that no two lists of texts
/// hash alike).
fn hash_item(hash: &mut blake3::Hasher, text: &[u8]) {
    hash.update(&(text.len() as u64).to_le_bytes());
    hash.update(text);
}

/// A page's objects into a kind's hash. A page of the API's compact shape
/// (`wire::page_shape`) by the range of its items, read without a JSON pass; any other by the
/// page's text from its first object's start to its last one's end (the objects and what
/// separates them, which reads back to the same objects). Either way one piece, its length
/// first, marked by how it was taken, so that equal hashes mean equal objects; BLAKE3 hashes it
/// on all SIMD lanes. Objects that are not slices of the page (never, from `list_pages`) go one
/// by one, marked apart.
fn hash_page(
    hash: &mut blake3::Hasher,
    kind: Kind,
    body: &bytes::Bytes,
    items: Option<&[bytes::Bytes]>,
) {
    if let Some((range, _)) = crate::api::wire::page_shape(kind, body) {
        hash.update(b"s");
        hash_item(hash, &body[range]);
        return;
    }
    let items = items.unwrap_or_default();
    let span = match (items.first(), items.last()) {
        (Some(first), Some(last)) => {
            let base = body.as_ptr() as usize;
            let start = (first.as_ptr() as usize).wrapping_sub(base);
            let end = (last.as_ptr() as usize)
                .wrapping_sub(base)
                .wrapping_add(last.len());
            body.get(start..end)
        }
        _ => Some(&[][..]),
    };
    match span {
        Some(span) => {
            hash.update(b"p");
            hash_item(hash, span);
        }
        None => {
            hash.update(b"i");
            hash.update(&(items.len() as u64).to_le_bytes());
            for item in items {
                hash_item(hash, item);
            }
        }
    }
}

fn singleton_items(kind: Kind, one: Option<&serde_json::Value>) -> Vec<Listed> {
    one.iter()
        .map(|v| (Ok(None), Object::new(kind, v)))
        .collect()
}

fn bad_page(kind: Kind, e: ListError) -> ClientError {
    match e {
        ListError::Client(e) => e,
        ListError::Page(reason) => ClientError::BadResponse {
            method: reqwest::Method::GET,
            path: crate::api::wire::collection_path(kind),
            reason,
        },
    }
}

/// The objects of one list page.
fn read_page<I: Into<crate::api::wire::Item> + Send>(
    kind: Kind,
    items: Vec<I>,
    expected: &Expected,
) -> Result<Vec<Listed>, String> {
    use rayon::prelude::*;
    // The items on all cores (a page of a thousand dashboards is a lot of work for one); each
    // parsed tree is dropped as soon as its object is made.
    items
        .into_par_iter()
        .map(|item| {
            let crate::api::wire::Item { raw, documents } = item.into();
            let (mut object, value) = Object::listed(kind, &raw, documents)
                .map_err(|e| format!("an item is not JSON ({e})"))?;
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
    match crate::api::registry::object_slug(kind, value).as_deref() {
        Some(s) if !s.is_empty() && !crate::api::wire::is_usable_segment(s) => Err(format!(
            "the target lists a {kind} that cfgctl cannot address: {}; it is left alone (neither compared, updated nor deleted)",
            crate::api::wire::unusable_segment_reason(s)
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
    let (caps, warnings, read, answers) = read_all(client, Mode::Eager(expected)).await?;
    let mut refused = BTreeMap::new();
    let mut results = Vec::with_capacity(read.len());
    for (kind, read) in read {
        match read {
            KindRead::Done(items) => results.push((kind, items)),
            // Not deferred when expecting.
            KindRead::Deferred(..) => results.push((kind, Vec::new())),
            KindRead::Refused(answer) => {
                refused.insert(kind, answer);
            }
        }
    }
    Ok(assemble(caps, warnings, results, refused, answers))
}

/// Reads capabilities and every readable kind's list, keeping the objects' texts and hashing
/// them, without working anything out (see [`Listing`]).
pub async fn list_deferred(client: &Client) -> Result<Listing, ClientError> {
    list_deferred_until(client, &WorkOut::default()).await
}

/// [`list_deferred`], working the pages out as they arrive once `work` is started.
pub async fn list_deferred_until(client: &Client, work: &WorkOut) -> Result<Listing, ClientError> {
    let (caps, warnings, read, answers) = read_all(client, Mode::Deferred(work)).await?;
    let mut refused = BTreeMap::new();
    let mut kinds = Vec::with_capacity(read.len());
    for (kind, read) in read {
        match read {
            KindRead::Deferred(pages, one) => kinds.push((kind, pages, one)),
            KindRead::Done(_) => kinds.push((kind, Vec::new(), None)),
            KindRead::Refused(answer) => {
                refused.insert(kind, answer);
            }
        }
    }
    Ok(Listing {
        caps,
        warnings,
        refused,
        kinds,
        answers,
    })
}

type ReadAll = (Capabilities, Vec<String>, Vec<(Kind, KindRead)>, Answers);

async fn read_all(client: &Client, mode: Mode<'_>) -> Result<ReadAll, ClientError> {
    let (described, description) = described(client).await?;
    let mut answers = blake3::Hasher::new();
    answers.update(description.as_bytes());
    // A description that could not be read is answered by the reason (which is shown).
    answers.update(described.warning.as_deref().unwrap_or_default().as_bytes());
    let warnings: Vec<String> = described.warning.iter().cloned().collect();
    let readable: Vec<Kind> = crate::api::registry::kinds()
        .into_iter()
        .map(|d| d.kind)
        .filter(|k| described.caps.can_read_state(*k))
        .collect();
    // The first kind that cannot be read ends the reading: the others are dropped rather than
    // waited for (a rate-limited target may have paused them for a long `Retry-After`).
    // Asked for longest first: the kinds whose objects carry documents are most of the bytes,
    // and their pages come one after another, so they set the pace (a server that answers one
    // request at a time, like the emulator, starts on them at once). Hashed in registry order.
    let mut order: Vec<usize> = (0..readable.len()).collect();
    order.sort_by_key(|&i| readable[i].def().embedded_json.is_empty());
    // The lists are asked for before the description's newer fields are worked out (on a
    // blocking thread meanwhile).
    let lists = try_join_all(order.iter().map(|&i| read_kind(client, readable[i], mode)));
    let finishing = tokio::task::spawn_blocking(move || described.finish());
    let (results, finished) = futures_util::future::join(lists, finishing).await;
    let results = results?;
    let (caps, _) = finished.map_err(|e| ClientError::BadResponse {
        method: reqwest::Method::GET,
        path: crate::api::wire::SWAGGER_PATH.into(),
        reason: format!("working out the description failed: {e}"),
    })?;
    let mut results: Vec<_> = order.into_iter().zip(results).collect();
    results.sort_by_key(|(i, _)| *i);
    let mut read = Vec::with_capacity(results.len());
    for (_, (kind, kind_read, hash)) in results {
        answers.update(hash.as_bytes());
        read.push((kind, kind_read));
    }
    for def in crate::api::registry::kinds()
        .into_iter()
        .filter(|d| !caps.can_read_state(d.kind))
    {
        tracing::info!(kind = def.name, "the target cannot list this kind");
    }
    Ok((
        caps,
        warnings,
        read,
        Answers(*answers.finalize().as_bytes()),
    ))
}

fn assemble(
    caps: Capabilities,
    mut warnings: Vec<String>,
    results: Vec<(Kind, Vec<Listed>)>,
    refused: BTreeMap<Kind, String>,
    answers: Answers,
) -> Fetched {
    let mut current = Current {
        refused,
        ..Current::default()
    };
    let mut resources = Vec::with_capacity(results.iter().map(|(_, items)| items.len()).sum());
    for (kind, items) in results {
        current.known.insert(kind);
        for (slug, object) in items {
            match slug {
                Ok(slug) => resources.push((Address::new(kind, slug), object)),
                Err(warning) => warnings.push(warning),
            }
        }
    }
    // Built at once from a list mostly in order (a kind's pages come in slug order), not
    // inserted one by one; of an address listed twice, the last object stays, as an insert's.
    current.resources = resources.into_iter().collect();
    Fetched {
        caps,
        current,
        warnings,
        answers,
    }
}

mod refused;
use refused::refused;

#[cfg(test)]
mod tests;
