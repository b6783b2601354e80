//! JSON pointer and dotted-path helpers, and the typo suggester: a leaf module that every
//! other one may use (it imports nothing of the crate), so no import circle can form through
//! them.

use serde_json::Value;

/// Escapes one JSON pointer segment (RFC 6901).
pub fn escape_pointer(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

/// A JSON pointer as the dotted path users read (`/thresholds/0/volume` →
/// `thresholds[0].volume`).
pub fn pointer_to_path(pointer: &str) -> String {
    let mut out = String::new();
    for segment in pointer.split('/').skip(1) {
        let segment = segment.replace("~1", "/").replace("~0", "~");
        if !segment.is_empty() && segment.bytes().all(|b| b.is_ascii_digit()) {
            out.push_str(&format!("[{segment}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&segment);
        }
    }
    out
}

/// Looks up a dotted path (`collection.slug`) in an object.
pub fn get_path<'a>(object: &'a Value, dotted: &str) -> Option<&'a Value> {
    dotted
        .split('.')
        .try_fold(object, |value, segment| value.as_object()?.get(segment))
}

/// The closest known name, if it is close enough to be a typo.
pub fn closest(name: &str, known: &[String]) -> Option<String> {
    known
        .iter()
        .map(|k| (edit_distance(name, k), k))
        .filter(|(d, k)| *d <= 2.max(k.len() / 4))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k.clone())
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Removes a dotted path from a document (missing parts are fine).
pub fn remove_path(doc: &mut Value, dotted: &str) {
    let mut node = doc;
    let segments: Vec<&str> = dotted.split('.').collect();
    let Some((last, parents)) = segments.split_last() else {
        return;
    };
    for segment in parents {
        match node.get_mut(*segment) {
            Some(next) => node = next,
            None => return,
        }
    }
    if let Value::Object(map) = node {
        map.shift_remove(*last);
    }
}

/// A JSON value's type in the words of messages (`found a list`): YAML users write no `null`,
/// so an absent value is "nothing"; integers and other numbers are told apart.
pub fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a number",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typo_suggestions() {
        let known: Vec<String> = ["description", "name", "labels"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(closest("labls", &known).as_deref(), Some("labels"));
        assert_eq!(closest("zzz", &known), None);
    }

    #[test]
    fn pointers_become_dotted_paths() {
        assert_eq!(
            pointer_to_path("/thresholds/0/volume/fixed_value"),
            "thresholds[0].volume.fixed_value"
        );
        assert_eq!(pointer_to_path("/labels/a~1b"), "labels.a/b");
        assert_eq!(pointer_to_path(""), "");
    }
}
