//! Walking a kind's list: every page followed, the token checked for cycles and the walk
//! bounded by `--max-pages`; each page handed over as received.

use reqwest::Method;
use serde_json::Value;

use super::body::Chunks;
use super::{Client, ClientError};
use crate::api::registry::Kind;
use crate::api::wire::{self, ListQuery};

/// Why a list walk ended early: the target, or the caller's reading of a page.
#[derive(Debug, thiserror::Error)]
pub enum ListError {
    #[error(transparent)]
    Client(#[from] ClientError),
    #[error("{0}")]
    Page(String),
}

/// How much of a page's end the next-page token is guessed from (`wire::trailing_next_token`
/// looks at the last 4 KB).
const GUESS_TAIL: usize = 8192;

impl Client {
    /// Every item of a kind's list, all pages followed; the number of pages.
    pub async fn list_all(
        &self,
        kind: Kind,
        filters: &ListQuery,
    ) -> Result<(Vec<Value>, usize), ClientError> {
        let path = wire::collection_path(kind);
        let mut items = Vec::new();
        let pages = self
            .list_pages(kind, filters, true, |_, page| {
                for item in page.unwrap_or_default() {
                    let value: Value = serde_json::from_slice(&item)
                        .map_err(|e| format!("an item is not JSON ({e})"))?;
                    items.push(value);
                }
                Ok(())
            })
            .await
            .map_err(|e| match e {
                ListError::Client(e) => e,
                ListError::Page(reason) => ClientError::BadResponse {
                    method: Method::GET,
                    path: path.clone(),
                    reason,
                },
            })?;
        Ok((items, pages))
    }

    /// Every page of a kind's list, each item as received (a slice of the page, which comes
    /// with them), handed to `each` as soon as the page has arrived and was split (so the
    /// caller can work on it while the next page is on its way); the number of pages. `each`
    /// says why a page is unusable, which ends the walk. Unless `read_through`, a page of the
    /// API's compact shape (`wire::page_shape`) is not split: `each` gets no items, and the
    /// caller splits the page when it needs them.
    pub async fn list_pages(
        &self,
        kind: Kind,
        filters: &ListQuery,
        read_through: bool,
        mut each: impl FnMut(&bytes::Bytes, Option<Vec<bytes::Bytes>>) -> Result<(), String>,
    ) -> Result<usize, ListError> {
        let path = wire::collection_path(kind);
        let mut query = filters.clone();
        let mut pages = 0;
        let mut seen = std::collections::HashSet::new();
        let never_ends = |reason: String| ClientError::BadResponse {
            method: Method::GET,
            path: path.clone(),
            reason: format!("the {kind} list never ends: {reason}"),
        };
        let bad = |reason: String| ClientError::BadResponse {
            method: Method::GET,
            path: path.clone(),
            reason,
        };
        // The next page is asked for as soon as its token is guessed from this page's end
        // (`wire::trailing_next_token`), read from the chunks as received: before they are
        // joined (a copy of the page into fresh memory) and before the page is read through
        // on another thread or taken by `each`. The token read from the whole page is the one
        // that counts (a wrong guess's page is dropped, its error too). Reading a large page
        // through takes a while, which the server would otherwise spend waiting for the next
        // request (docs/performance.md).
        // A page too large names its kind.
        let listing = |e: ClientError| e.listing(kind);
        let mut page: Chunks = self
            .call_with(Method::GET, &path, &query.to_query_string(), None, None)
            .await
            .map_err(listing)?;
        loop {
            pages += 1;
            let guess = wire::trailing_next_token(&page.tail(GUESS_TAIL))
                .filter(|g| pages < self.max_pages && !seen.contains(g));
            let ahead_query = guess.as_deref().map(|guess| {
                let mut next = query.clone();
                next.token = Some(guess.to_string());
                next.to_query_string()
            });
            let asking = futures_util::future::OptionFuture::from(
                ahead_query
                    .as_deref()
                    .map(|q| self.call_with::<Chunks>(Method::GET, &path, q, None, None)),
            );
            let received = std::mem::replace(&mut page, Chunks::empty());
            let taking = async {
                // The next page's request goes out first (joining and taking hold the thread).
                tokio::task::yield_now().await;
                let body = received.join();
                match (!read_through)
                    .then(|| wire::page_shape(kind, &body))
                    .flatten()
                {
                    // Not read through: `each` takes the page as it is.
                    Some((_, next)) => {
                        each(&body, None).map_err(ListError::Page)?;
                        Ok::<String, ListError>(next)
                    }
                    // Read through on another thread.
                    None => {
                        let copy = body.clone();
                        let split =
                            tokio::task::spawn_blocking(move || wire::split_list_page(kind, &copy))
                                .await
                                .map_err(|e| bad(format!("reading a page failed: {e}")))?;
                        let (next, items) = split.map_err(bad)?;
                        each(&body, Some(items)).map_err(ListError::Page)?;
                        Ok(next)
                    }
                }
            };
            let (ahead, taken) = tokio::join!(asking, taking);
            let next = taken?;
            if next.is_empty() {
                return Ok(pages);
            }
            if !seen.insert(next.clone()) {
                return Err(
                    never_ends("the server returned the same page token twice".into()).into(),
                );
            }
            if pages >= self.max_pages {
                return Err(never_ends(format!(
                    "more than {} pages (--max-pages)",
                    self.max_pages
                ))
                .into());
            }
            query.token = Some(next);
            page = match (guess, ahead) {
                (Some(guess), Some(fetched)) if query.token.as_ref() == Some(&guess) => {
                    fetched.map_err(listing)?
                }
                _ => self
                    .call_with(Method::GET, &path, &query.to_query_string(), None, None)
                    .await
                    .map_err(listing)?,
            };
        }
    }
}
