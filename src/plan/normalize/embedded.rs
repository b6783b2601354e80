//! The comparable bytes of an embedded document (`dashboard_json`), straight from its text.
//!
//! [`normalize`](super::normalize) parses an embedded document into a `Value` (an `IndexMap`
//! per object), removes its volatile members, strips its zero values, sorts its keys and makes
//! integral numbers integers; the digest then serialises the result. For a dashboard that is
//! the costly part of comparing it. [`comparable`] writes the same bytes in one pass over the
//! text, with no tree: each member is written as it is read (a zero one taken back), and an
//! object whose keys were not written in order has its members' bytes put in order when it
//! closes. A server writes its documents with sorted keys, so a listed one is mostly copied.
//!
//! It is a shortcut to the same bytes, never another form: anything it does not take on (an
//! escaped or repeated key, deep nesting, text serde_json would refuse) answers `None`, and
//! the caller normalises the slow way. A property test holds the two to byte equality.

use serde_json::Number;

use super::key_order;
use crate::api::registry::Volatile;
use crate::util::json_string::special;

/// Nesting this reader takes on (serde_json refuses more than 128).
const MAX_DEPTH: usize = 100;

/// A scalar as read from the text.
enum Scalar<'a> {
    Null,
    Bool(bool),
    /// An integer written plainly (`0` or `-?[1-9][0-9]{0,17}`): serde_json reads it as an
    /// `i64`/`u64` and writes it back as it is.
    Int(&'a str),
    /// Any other number, as serde_json reads it.
    Num(Number),
    /// A string as written, its quotes included: no escape, so also as serde_json writes it.
    Str(&'a str),
    /// A string as written, its quotes included, with escapes serde_json writes the same way.
    Escaped(&'a str),
    /// A string with other escapes, decoded by serde_json.
    Owned(String),
}

/// The bytes `serde_json::to_vec` writes for the document `text` once its volatile members
/// are removed, its zero values stripped, its keys sorted and its integral numbers made
/// integers: `Some(None)` when nothing is left of it, `None` when this reader does not take
/// the text on (the caller then normalises the slow way).
pub(super) fn comparable(text: &str, volatile: &[Volatile]) -> Option<Option<Vec<u8>>> {
    let mut reader = Reader {
        text,
        bytes: text.as_bytes(),
        at: 0,
        out: Vec::with_capacity(text.len()),
        members: Vec::new(),
        spare: Vec::new(),
        reread: 0,
    };
    let paths: Vec<&str> = volatile.iter().map(|v| v.path).collect();
    let zero = reader.value(0, true, &paths)?;
    reader.skip_space();
    if reader.at != reader.bytes.len() {
        return None;
    }
    Some((!zero).then_some(reader.out))
}

struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
    out: Vec<u8>,
    /// The members of the objects open, innermost last: each key, and the range of `out`
    /// its member was written to (`None`: removed, as volatile or zero).
    members: Vec<(&'a str, Option<(usize, usize)>)>,
    /// An object's bytes while its members are put in order.
    spare: Vec<u8>,
    /// Bytes read a second time (see [`Reader::array`]): bounded, so that no nesting makes
    /// the reading take more than a few passes over the text.
    reread: usize,
}

impl<'a> Reader<'a> {
    #[inline(always)]
    fn skip_space(&mut self) {
        // A compact document has none; a pretty one's indentation goes eight spaces at a time.
        if let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.at) {
            self.skip_space_slow();
        }
    }

    fn skip_space_slow(&mut self) {
        while let Some(chunk) = self.bytes.get(self.at..self.at + 8) {
            if u64::from_le_bytes(chunk.try_into().unwrap_or_default())
                != u64::from_le_bytes(*b"        ")
            {
                break;
            }
            self.at += 8;
        }
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    /// Writes the value at `at` (stripped of zero values when `strip`; without the members
    /// at the dotted `volatile` paths); true when what it wrote is a zero value.
    fn value(&mut self, depth: usize, strip: bool, volatile: &[&str]) -> Option<bool> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.skip_space();
        let scalar = match *self.bytes.get(self.at)? {
            b'{' => return self.object(depth, strip, volatile),
            b'[' => return self.array(depth, strip),
            b'"' => self.string()?,
            b't' => self.literal(b"true", Scalar::Bool(true))?,
            b'f' => self.literal(b"false", Scalar::Bool(false))?,
            b'n' => self.literal(b"null", Scalar::Null)?,
            b'-' | b'0'..=b'9' => self.number()?,
            _ => return None,
        };
        write(&scalar, &mut self.out);
        Some(is_zero(&scalar))
    }

    fn literal<const N: usize>(
        &mut self,
        word: &[u8; N],
        scalar: Scalar<'a>,
    ) -> Option<Scalar<'a>> {
        let end = self.at + N;
        let found: &[u8; N] = self.bytes.get(self.at..end)?.try_into().ok()?;
        (found == word).then(|| {
            self.at = end;
            scalar
        })
    }

    fn number(&mut self) -> Option<Scalar<'a>> {
        let start = self.at;
        while let Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') = self.bytes.get(self.at) {
            self.at += 1;
        }
        let token = self.text.get(start..self.at)?;
        let negative = token.as_bytes().first() == Some(&b'-');
        let digits = &token.as_bytes()[usize::from(negative)..];
        let plain = match digits {
            [] => false,
            [b'0'] => !negative,
            [b'0', ..] => false,
            _ => digits.len() <= 18 && digits.iter().all(u8::is_ascii_digit),
        };
        if plain {
            return Some(Scalar::Int(token));
        }
        // serde_json's own reading of anything else (and its refusal of what is not JSON).
        let n: Number = serde_json::from_str(token).ok()?;
        Some(Scalar::Num(tidy_number(n)))
    }

    /// A string at the opening quote: its contents as written when serde_json writes them
    /// the same way.
    fn string(&mut self) -> Option<Scalar<'a>> {
        let start = self.at + 1;
        // The common case: no escape before the closing quote (and no raw control character,
        // which is not JSON).
        let stop = special(self.bytes, start)?;
        match self.bytes[stop] {
            b'"' => {
                self.at = stop + 1;
                return self.text.get(start - 1..stop + 1).map(Scalar::Str);
            }
            b'\\' => {}
            _ => return None,
        }
        let mut at = stop;
        // Escapes serde_json writes the same way (`\"`, `\\`, `\n`, ...) leave the text as
        // written; any other (`\u0041`, `\/`) is decoded and written again.
        let mut as_written = true;
        loop {
            match *self.bytes.get(at)? {
                b'"' => break,
                b'\\' => {
                    as_written &= matches!(
                        self.bytes.get(at + 1),
                        Some(b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't')
                    );
                    at = special(self.bytes, at + 2)?;
                }
                // A raw control character is not JSON.
                _ => return None,
            }
        }
        self.at = at + 1;
        if as_written {
            return self.text.get(start - 1..at + 1).map(Scalar::Escaped);
        }
        let quoted = self.text.get(start - 1..at + 1)?;
        serde_json::from_str::<String>(quoted)
            .ok()
            .map(Scalar::Owned)
    }

    /// The members of a list or an object after its opening byte, each read by `member`,
    /// separated by commas, up to the closing byte.
    fn members(
        &mut self,
        close: u8,
        mut member: impl FnMut(&mut Self) -> Option<()>,
    ) -> Option<()> {
        self.at += 1;
        self.skip_space();
        if self.bytes.get(self.at) == Some(&close) {
            self.at += 1;
            return Some(());
        }
        loop {
            member(self)?;
            self.skip_space();
            match *self.bytes.get(self.at)? {
                b',' => self.at += 1,
                c if c == close => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// A list: each member stripped, unless stripping would leave it zero (then it is
    /// written again as it is, unstripped): `normalize::strip_zero`'s rule for lists.
    fn array(&mut self, depth: usize, strip: bool) -> Option<bool> {
        self.out.push(b'[');
        let mut empty = true;
        self.members(b']', |r| {
            if !std::mem::take(&mut empty) {
                r.out.push(b',');
            }
            r.skip_space();
            let (from, written) = (r.at, r.out.len());
            let zero = r.value(depth + 1, strip, &[])?;
            // Only an object with members can be left zero by stripping.
            if strip && zero && r.out.len() - written == 2 && r.at - from > 2 {
                r.reread += r.at - from;
                if r.reread > 2 * r.bytes.len() {
                    return None;
                }
                r.at = from;
                r.out.truncate(written);
                r.value(depth + 1, false, &[])?;
            }
            Some(())
        })?;
        self.out.push(b']');
        Some(empty)
    }

    /// An object: its members in key order (a repeated key is not taken on), the zero ones
    /// left out when `strip`, the volatile ones always.
    fn object(&mut self, depth: usize, strip: bool, volatile: &[&str]) -> Option<bool> {
        self.out.push(b'{');
        let (base, body) = (self.members.len(), self.out.len());
        let mut written = false;
        let mut kept = 0usize;
        self.members(b'}', |r| {
            r.skip_space();
            if r.bytes.get(r.at) != Some(&b'"') {
                return None;
            }
            // Keys are compared and written as they are: an escaped one is not taken on.
            let Scalar::Str(quoted) = r.string()? else {
                return None;
            };
            let key = quoted.get(1..quoted.len() - 1)?;
            r.skip_space();
            if r.bytes.get(r.at) != Some(&b':') {
                return None;
            }
            r.at += 1;
            let start = r.out.len();
            if written {
                r.out.push(b',');
            }
            let from = r.out.len();
            r.out.extend_from_slice(quoted.as_bytes());
            r.out.push(b':');
            // Volatile members are near the top: below them, nothing to look for.
            let inner: Vec<&str> = match volatile {
                [] => Vec::new(),
                _ => volatile
                    .iter()
                    .filter_map(|p| p.strip_prefix(key)?.strip_prefix('.'))
                    .collect(),
            };
            let zero = r.value(depth + 1, strip, &inner)?;
            // A path's last segment (`jsonpath::remove_path`): a key with a dot in it is no path.
            let gone = volatile.iter().any(|p| *p == key && !p.contains('.')) || (strip && zero);
            if gone {
                r.out.truncate(start);
            }
            written |= !gone;
            kept += usize::from(!gone);
            r.members
                .push((key, (!gone).then_some((from, r.out.len()))));
            Some(())
        })?;
        if !self.members[base..]
            .windows(2)
            .all(|w| key_less(w[0].0, w[1].0))
        {
            self.in_key_order(base, body)?;
        }
        self.members.truncate(base);
        self.out.push(b'}');
        Some(kept == 0)
    }

    /// Puts the members of the object whose bytes start at `body` in key order. `None` for
    /// a repeated key.
    fn in_key_order(&mut self, base: usize, body: usize) -> Option<()> {
        let Reader {
            members,
            out,
            spare,
            ..
        } = self;
        let members = &mut members[base..];
        members.sort_by(|a, b| key_order(a.0, b.0));
        if members.windows(2).any(|w| w[0].0 == w[1].0) {
            return None;
        }
        spare.clear();
        spare.extend_from_slice(&out[body..]);
        out.truncate(body);
        for (i, (from, to)) in members.iter().filter_map(|m| m.1).enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(&spare[from - body..to - body]);
        }
        Some(())
    }
}

/// `a < b`: [`key_order`].
#[inline(always)]
fn key_less(a: &str, b: &str) -> bool {
    key_order(a, b).is_lt()
}

/// `tidy`'s numbers: an integral float (below 9e15) becomes that integer.
pub(super) fn tidy_number(n: Number) -> Number {
    if let (None, None, Some(f)) = (n.as_i64(), n.as_u64(), n.as_f64()) {
        if f.fract() == 0.0 && f.abs() < 9.0e15 {
            return Number::from(f as i64);
        }
    }
    n
}

/// `registry::is_zero`.
fn is_zero(scalar: &Scalar) -> bool {
    match scalar {
        Scalar::Null => true,
        Scalar::Bool(b) => !b,
        Scalar::Int(t) => *t == "0",
        Scalar::Num(n) => n.as_f64() == Some(0.0),
        Scalar::Str(s) | Scalar::Escaped(s) => s.len() == 2,
        Scalar::Owned(s) => s.is_empty(),
    }
}

/// serde_json's compact writing of a scalar.
fn write(scalar: &Scalar, out: &mut Vec<u8>) {
    match scalar {
        Scalar::Null => out.extend_from_slice(b"null"),
        Scalar::Bool(true) => out.extend_from_slice(b"true"),
        Scalar::Bool(false) => out.extend_from_slice(b"false"),
        Scalar::Int(t) => out.extend_from_slice(t.as_bytes()),
        // Writing a number or a string into a Vec cannot fail.
        Scalar::Num(n) => {
            let _ = serde_json::to_writer(&mut *out, n);
        }
        Scalar::Owned(s) => {
            let _ = serde_json::to_writer(&mut *out, s);
        }
        Scalar::Str(s) | Scalar::Escaped(s) => out.extend_from_slice(s.as_bytes()),
    }
}

#[cfg(test)]
mod tests;
