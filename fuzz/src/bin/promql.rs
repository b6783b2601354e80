//! The offline PromQL check (`promql::check`, what `validate` runs on every PromQL field) on
//! arbitrary text, at any size. The first byte picks the form (bit 0 a selector, bit 1 a
//! template, bit 2 variables); the second how many times the rest is repeated (1 to 128
//! times by its low bits, 256 times as many when its bit 7 is set), so that short inputs reach the long and
//! deeply nested queries a pull request may hold (`1+1+...`, `((((...))))`). Checks: no panic,
//! no stack overflow, no hang (a text past `promql::MAX_BYTES` is refused at once), an error
//! located inside the text with a message.

fn main() {
    afl::fuzz!(|data: &[u8]| {
        let [form, times, rest @ ..] = data else {
            return;
        };
        let Ok(unit) = std::str::from_utf8(rest) else {
            return;
        };
        let form = cfgctl::util::promql::Form {
            selector: form & 1 != 0,
            template: form & 2 != 0,
            variables: form & 4 != 0,
        };
        let mut count = usize::from(times & 0x7f) + 1;
        if times & 0x80 != 0 {
            count *= 256;
        }
        let text = unit.repeat(count);
        if let Err(e) = cfgctl::util::promql::check(&text, form) {
            assert!(e.offset <= text.len(), "error past the end: {e:?}");
            assert!(text.is_char_boundary(e.offset), "error inside a character: {e:?}");
            assert!(!e.message.trim().is_empty(), "error without a message");
            if text.len() > cfgctl::util::promql::MAX_BYTES {
                assert!(e.message.contains("too long"), "{e:?}");
            }
        }
    });
}
