//! Request bodies serialised once, straight from the borrowed object, and answers read as a
//! value or only checked to be JSON.

use reqwest::Method;
use serde_json::Value;

use super::{usable, Client, ClientError};
use crate::api::registry::Address;
use crate::api::registry::Kind;
use crate::api::wire;

/// How a successful answer is read.
pub(super) trait Answer: Sized {
    /// Read as the chunks received ([`Answer::from_chunks`]), not joined into one buffer first.
    const CHUNKED: bool = false;
    /// A success without a body.
    fn empty() -> Self;
    fn from_body(bytes: bytes::Bytes) -> serde_json::Result<Self>;
    /// A success, as the chunks received, when [`Answer::CHUNKED`].
    fn from_chunks(chunks: Vec<bytes::Bytes>) -> serde_json::Result<Self> {
        Self::from_body(join(chunks))
    }
}

/// Why a body was not read: the connection, or its size.
pub(super) enum Capped {
    Transport(reqwest::Error),
    /// Larger than the limit: `declared` when its `Content-Length` said so before any of it
    /// was read.
    TooLarge {
        declared: Option<u64>,
    },
}

/// A response's body as the chunks received, refused when it is larger than `limit` bytes:
/// a declared length at once, a streamed body as soon as it passes the limit. The response is
/// dropped then, which closes the connection: the rest is never received, let alone held.
pub(super) async fn read_capped(
    mut resp: reqwest::Response,
    limit: u64,
) -> Result<Vec<bytes::Bytes>, Capped> {
    if let Some(declared) = resp.content_length().filter(|&n| n > limit) {
        return Err(Capped::TooLarge {
            declared: Some(declared),
        });
    }
    let mut chunks = Vec::new();
    let mut read: u64 = 0;
    while let Some(chunk) = resp.chunk().await.map_err(Capped::Transport)? {
        read = read.saturating_add(chunk.len() as u64);
        if read > limit {
            return Err(Capped::TooLarge { declared: None });
        }
        chunks.push(chunk);
    }
    Ok(chunks)
}

/// Chunks as one buffer (copied only when there is more than one).
pub(super) fn join(mut chunks: Vec<bytes::Bytes>) -> bytes::Bytes {
    match chunks.len() {
        0 => bytes::Bytes::new(),
        1 => chunks.remove(0),
        _ => {
            let mut out = bytes::BytesMut::with_capacity(chunks.iter().map(|c| c.len()).sum());
            for c in &chunks {
                out.extend_from_slice(c);
            }
            out.freeze()
        }
    }
}

/// A body as the chunks it arrived in (a list page of megabytes): its end can be looked at
/// before the chunks are joined, which is a copy of the whole page into fresh memory.
pub(super) struct Chunks(Vec<bytes::Bytes>);

impl Chunks {
    pub(super) fn empty() -> Chunks {
        Chunks(Vec::new())
    }

    /// The last `n` bytes (all of them when there are fewer).
    pub(super) fn tail(&self, n: usize) -> std::borrow::Cow<'_, [u8]> {
        if let Some(last) = self.0.last().filter(|c| c.len() >= n) {
            return std::borrow::Cow::Borrowed(&last[last.len() - n..]);
        }
        // The chunks that hold the last `n` bytes (the first of them maybe only in part).
        let mut from = self.0.len();
        let mut held = 0;
        while from > 0 && held < n {
            from -= 1;
            held += self.0[from].len();
        }
        let mut out: Vec<u8> = Vec::with_capacity(held);
        for c in &self.0[from..] {
            out.extend_from_slice(c);
        }
        out.drain(..held.saturating_sub(n));
        std::borrow::Cow::Owned(out)
    }

    /// The whole body in one buffer.
    pub(super) fn join(self) -> bytes::Bytes {
        join(self.0)
    }
}

impl Answer for Chunks {
    const CHUNKED: bool = true;

    fn empty() -> Self {
        Chunks::empty()
    }

    fn from_body(bytes: bytes::Bytes) -> serde_json::Result<Self> {
        Ok(Chunks(vec![bytes]))
    }

    fn from_chunks(chunks: Vec<bytes::Bytes>) -> serde_json::Result<Self> {
        Ok(Chunks(chunks))
    }
}

impl Answer for Value {
    fn empty() -> Self {
        Value::Object(Default::default())
    }

    fn from_body(bytes: bytes::Bytes) -> serde_json::Result<Self> {
        serde_json::from_slice(&bytes)
    }
}

/// A target's swagger.json: the embedded description as `cfgctl serve` serves it, known by
/// its bytes without reading them (`spec::is_served_embedded`), or the document read.
#[derive(Debug)]
pub enum Swagger {
    /// With the hash of its bytes.
    ServedEmbedded(blake3::Hash),
    Read(Value),
}

impl Answer for Swagger {
    fn empty() -> Self {
        Swagger::Read(Value::empty())
    }

    fn from_body(bytes: bytes::Bytes) -> serde_json::Result<Self> {
        let hash = blake3::hash(&bytes);
        if crate::api::spec::is_served_embedded(&hash) {
            return Ok(Swagger::ServedEmbedded(hash));
        }
        Value::from_body(bytes).map(Swagger::Read)
    }
}

/// The body as received, read by the caller (a list page, split without building its items).
impl Answer for bytes::Bytes {
    fn empty() -> Self {
        bytes::Bytes::new()
    }

    fn from_body(bytes: bytes::Bytes) -> serde_json::Result<Self> {
        Ok(bytes)
    }
}

/// A success checked to be JSON without building anything: the same check as parsing it into
/// a [`Value`] (syntax, number range, string escapes, nesting limit, trailing characters),
/// since every value is read through `deserialize_any` as `Value` reads it
/// (`serde::de::IgnoredAny` would skip numbers and escapes unchecked).
pub(super) struct Unread;

impl Answer for Unread {
    fn empty() -> Self {
        Unread
    }

    fn from_body(bytes: bytes::Bytes) -> serde_json::Result<Self> {
        serde_json::from_slice(&bytes)
    }
}

impl<'de> serde::Deserialize<'de> for Unread {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Unread, D::Error> {
        d.deserialize_any(UnreadVisitor)
    }
}

struct UnreadVisitor;

impl<'de> serde::de::Visitor<'de> for UnreadVisitor {
    type Value = Unread;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Unread, E> {
        Ok(Unread)
    }

    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Unread, E> {
        Ok(Unread)
    }

    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Unread, E> {
        Ok(Unread)
    }

    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Unread, E> {
        Ok(Unread)
    }

    fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Unread, E> {
        Ok(Unread)
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Unread, E> {
        Ok(Unread)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Unread, A::Error> {
        while seq.next_element::<Unread>()?.is_some() {}
        Ok(Unread)
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Unread, A::Error> {
        while map.next_entry::<Unread, Unread>()?.is_some() {}
        Ok(Unread)
    }
}

/// A create or update body written straight from the borrowed object: the same bytes as
/// serialising [`wire::create_body`] or [`wire::update_body`] (the wrapper key, then
/// `create_if_missing` and `dry_run` when set), without cloning the object into a wrapper.
pub(super) struct WriteBody<'a> {
    wrapper: &'static str,
    object: &'a Value,
    create_if_missing: bool,
    dry_run: bool,
}

impl<'a> WriteBody<'a> {
    pub(super) fn create(kind: Kind, object: &'a Value, commit: wire::Commit) -> WriteBody<'a> {
        WriteBody {
            wrapper: kind.def().singular,
            object,
            create_if_missing: false,
            dry_run: commit == wire::Commit::DryRun,
        }
    }

    pub(super) fn update(
        kind: Kind,
        object: &'a Value,
        if_missing: wire::IfMissing,
        commit: wire::Commit,
    ) -> WriteBody<'a> {
        WriteBody {
            wrapper: kind.def().singular,
            object,
            create_if_missing: if_missing == wire::IfMissing::Create,
            dry_run: commit == wire::Commit::DryRun,
        }
    }
}

impl serde::Serialize for WriteBody<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(None)?;
        map.serialize_entry(self.wrapper, self.object)?;
        if self.create_if_missing {
            map.serialize_entry("create_if_missing", &true)?;
        }
        if self.dry_run {
            map.serialize_entry("dry_run", &true)?;
        }
        map.end()
    }
}

/// A request body as JSON bytes (a `Value` or a [`WriteBody`] always serialises; the error
/// is kept typed all the same).
pub(super) fn serialise(
    method: &Method,
    path: &str,
    body: &impl serde::Serialize,
) -> Result<bytes::Bytes, ClientError> {
    // Room for a dashboard's body at once, rather than growing (and copying) it six times.
    let mut buf = Vec::with_capacity(8 * 1024);
    serde_json::to_writer(&mut buf, body)
        .map(|()| bytes::Bytes::from(buf))
        .map_err(|e| ClientError::Transport {
            method: method.clone(),
            path: path.to_string(),
            resource: None,
            reason: format!("cannot serialise the request body: {e}"),
        })
}

/// The writes of the executor, and the request halves `create` and `update` share.
impl Client {
    /// POST, for a caller that does not read the created object (the executor): the answer is
    /// checked to be JSON, as [`Client::create`] does, but no value is built from it.
    pub async fn submit_create(
        &self,
        kind: Kind,
        object: &Value,
        commit: wire::Commit,
    ) -> Result<(), ClientError> {
        self.post::<Unread>(kind, object, commit).await.map(|_| ())
    }

    pub(super) async fn post<A: Answer>(
        &self,
        kind: Kind,
        object: &Value,
        commit: wire::Commit,
    ) -> Result<A, ClientError> {
        let address = Address::new(kind, crate::api::registry::object_slug(kind, object));
        let path = wire::collection_path(kind);
        let body = WriteBody::create(kind, object, commit);
        let body = serialise(&Method::POST, &path, &body)?;
        self.call_with(Method::POST, &path, "", Some(&body), Some(address))
            .await
    }

    /// PUT, for a caller that does not read the updated object (the executor): the answer is
    /// checked to be JSON, as [`Client::update`] does, but no value is built from it.
    pub async fn submit_update(
        &self,
        kind: Kind,
        slug: Option<&str>,
        object: &Value,
        if_missing: wire::IfMissing,
        commit: wire::Commit,
    ) -> Result<(), ClientError> {
        self.put::<Unread>(kind, slug, object, if_missing, commit)
            .await
            .map(|_| ())
    }

    pub(super) async fn put<A: Answer>(
        &self,
        kind: Kind,
        slug: Option<&str>,
        object: &Value,
        if_missing: wire::IfMissing,
        commit: wire::Commit,
    ) -> Result<A, ClientError> {
        usable(&Method::PUT, kind, slug)?;
        let address = Address::new(kind, slug.map(str::to_string));
        let path = wire::item_path(kind, slug);
        let body = WriteBody::update(kind, object, if_missing, commit);
        let body = serialise(&Method::PUT, &path, &body)?;
        self.call_with(Method::PUT, &path, "", Some(&body), Some(address))
            .await
    }
}
