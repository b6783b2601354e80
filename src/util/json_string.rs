//! JSON strings read from their text, eight bytes at a time: where one stops
//! ([`special`]), where it ends ([`string_end`]) and what it decodes to ([`unescape`]). A
//! dashboard's document is a JSON string with a `\"` every few bytes, and its inner strings are
//! short: a `memchr` call, or serde_json's decoding, per escape or per string costs more than
//! the bytes. A leaf module (it imports nothing of the crate): the one reading of a string's
//! text for the list pages (`wire::page`), the listed objects (`plan::current::listed`) and
//! the embedded documents (`plan::normalize::embedded`).

/// The position of the first quote, backslash or control character of `bytes` from `at` on:
/// eight bytes at a time (a short string is not worth a `memchr` call).
pub fn special(bytes: &[u8], mut at: usize) -> Option<usize> {
    while let Some(chunk) = bytes.get(at..at + 8) {
        let found = special_bytes(u64::from_le_bytes(chunk.try_into().ok()?));
        if found != 0 {
            return Some(at + found.trailing_zeros() as usize / 8);
        }
        at += 8;
    }
    let rest = bytes.get(at..)?;
    rest.iter()
        .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
        .map(|i| at + i)
}

/// The end (after its closing quote) of the JSON string whose contents start at `at` (after
/// its opening quote), an escape's next byte skipped; `None` when it does not end or holds a
/// raw control character (not JSON).
pub fn string_end(bytes: &[u8], mut at: usize) -> Option<usize> {
    loop {
        at = special(bytes, at)?;
        match bytes[at] {
            b'"' => return Some(at + 1),
            b'\\' => at += 2,
            _ => return None,
        }
    }
}

/// The bytes of `word` that are a quote, a backslash or a control character, each as its high
/// bit (serde_json's test: the lowest one marked is exact, which is the one used).
fn special_bytes(word: u64) -> u64 {
    const ONES: u64 = u64::MAX / 255;
    let has_zero = |w: u64| w.wrapping_sub(ONES) & !w;
    let control = word.wrapping_sub(ONES * 0x20) & !word;
    let quote = has_zero(word ^ (ONES * u64::from(b'"')));
    let backslash = has_zero(word ^ (ONES * u64::from(b'\\')));
    (control | quote | backslash) & (ONES << 7)
}

/// The contents of the JSON string of `raw` from `from` (after its opening quote) on, decoded
/// as serde_json decodes them, and the end of the string (after its closing quote). `None`
/// for what serde_json refuses (a raw control character, an unknown escape, text that is not
/// UTF-8) and for a `\u` escape of a surrogate (left to serde_json).
pub fn unescape(raw: &[u8], from: usize) -> Option<(String, usize)> {
    // Room for a dashboard's document at once; `raw` may run on to a page's end (megabytes).
    let mut out = Vec::with_capacity(raw.len().saturating_sub(from).min(8 * 1024));
    let mut at = from;
    loop {
        // Eight bytes at a time up to the first quote, backslash or control character: each
        // eight copied whole, then cut back to it.
        while let Some(chunk) = raw.get(at..at + 8) {
            let found = special_bytes(u64::from_le_bytes(chunk.try_into().ok()?));
            out.extend_from_slice(chunk);
            if found != 0 {
                let plain = found.trailing_zeros() as usize / 8;
                out.truncate(out.len() - 8 + plain);
                at += plain;
                break;
            }
            at += 8;
        }
        let (decoded, taken) = match *raw.get(at)? {
            b'"' => return String::from_utf8(out).ok().map(|s| (s, at + 1)),
            // A raw control character is not JSON.
            0..=0x1f => return None,
            b'\\' => match *raw.get(at + 1)? {
                b'"' => (b'"', 2),
                b'\\' => (b'\\', 2),
                b'/' => (b'/', 2),
                b'b' => (b'\x08', 2),
                b'f' => (b'\x0c', 2),
                b'n' => (b'\n', 2),
                b'r' => (b'\r', 2),
                b't' => (b'\t', 2),
                b'u' => {
                    let hex = raw.get(at + 2..at + 6)?;
                    if !hex.iter().all(u8::is_ascii_hexdigit) {
                        return None;
                    }
                    let code = u32::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?;
                    // A surrogate is not a char: serde_json's business.
                    let c = char::from_u32(code)?;
                    out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                    at += 6;
                    continue;
                }
                _ => return None,
            },
            // One of the last few bytes.
            c => (c, 1),
        };
        out.push(decoded);
        at += taken;
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// `unescape` decodes a JSON string as serde_json does, whatever escapes it was
        /// written with, and never answers for a text serde_json refuses.
        #[test]
        fn a_string_is_unescaped_as_serde_json_reads_it(
            s in any::<String>(),
            style in 0..3u8,
            bytes in prop::collection::vec(any::<u8>(), 0..24),
        ) {
            let quoted = match style {
                0 => serde_json::to_string(&s).unwrap(),
                // `\/`, and every character of the BMP as `\u` (another plane's raw).
                1 => serde_json::to_string(&s).unwrap().replace('/', "\\/"),
                _ => format!("\"{}\"", s.chars().map(|c| match c {
                    c if (c as u32) < 0x10000 => format!("\\u{:04X}", c as u32),
                    c => c.to_string(),
                }).collect::<String>()),
            };
            let wanted: String = serde_json::from_str(&quoted).unwrap();
            prop_assert_eq!(super::unescape(quoted.as_bytes(), 1), Some((wanted, quoted.len())));
            let followed = format!("{quoted},\"{quoted}\"");
            prop_assert_eq!(super::string_end(followed.as_bytes(), 1), Some(quoted.len()));
            let first = bytes.iter().position(|&c| c == b'"' || c == b'\\' || c < 0x20);
            prop_assert_eq!(super::special(&bytes, 0), first);
            let raw = [b"\"".as_slice(), &bytes, b"\" x"].concat();
            if let Some((got, end)) = super::unescape(&raw, 1) {
                prop_assert_eq!(Some(got), serde_json::from_slice::<String>(&raw[..end]).ok());
            }
        }
    }
}
