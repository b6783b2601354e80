//! Page tokens: opaque to clients, bound to the position, the kind and the filters they were
//! issued for.

pub(super) fn encode_token(after: &str, fingerprint: &str) -> String {
    format!("{after}\u{1}{fingerprint}")
        .bytes()
        .map(|b| format!("{b:02x}"))
        .collect()
}

pub(super) fn decode_token(token: &str) -> Option<(String, String)> {
    if !token.len().is_multiple_of(2) {
        return None;
    }
    let bytes: Option<Vec<u8>> = (0..token.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(token.get(i..i + 2)?, 16).ok())
        .collect();
    let text = String::from_utf8(bytes?).ok()?;
    let (after, fingerprint) = text.split_once('\u{1}')?;
    Some((after.to_string(), fingerprint.to_string()))
}
