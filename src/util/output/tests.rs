use super::*;

// Secrets are process-wide; each test registers its own distinct ones.

fn guarded(text: &str) -> String {
    let mut out = Vec::new();
    {
        let mut w = Guarded::new(&mut out);
        w.write_all(text.as_bytes()).unwrap();
    }
    String::from_utf8(out).unwrap()
}

#[test]
fn secrets_are_redacted_in_every_form() {
    register_secret("tok-3f9a/b c");
    assert_eq!(redact("x tok-3f9a/b c y"), "x [REDACTED] y");
    assert_eq!(redact("?t=tok-3f9a%2Fb+c"), "?t=[REDACTED]");
    assert_eq!(redact("/p/tok-3f9a%2Fb%20c"), "/p/[REDACTED]");
    assert_eq!(redact("nothing here"), "nothing here");
    register_secret("ab");
    assert_eq!(redact("ab"), "ab", "too short to be a token");
}

#[test]
fn secrets_are_redacted_base64_encoded_and_json_escaped() {
    // base64("hooks/sl?ck>") = aG9va3Mvc2w/Y2s+ (standard), aG9va3Mvc2w_Y2s- (URL-safe).
    register_secret("hooks/sl?ck>");
    assert_eq!(redact("Basic aG9va3Mvc2w/Y2s+"), "Basic [REDACTED]");
    assert_eq!(redact("u=aG9va3Mvc2w_Y2s-"), "u=[REDACTED]");
    // base64("pass\"w1") with padding, and the JSON-escaped form.
    register_secret("pass\"w1");
    assert_eq!(redact("cGFzcyJ3MQ=="), "[REDACTED]");
    assert_eq!(redact(r#"{"p":"pass\"w1"}"#), r#"{"p":"[REDACTED]"}"#);
}

/// A base64-encoded request body a server echoes holds the secret at any offset: its base64
/// then depends on where in a three-byte group the secret starts. Every offset is redacted.
/// Base64 as MIME and PEM write it (independent of cfgctl's encoder, so a bug there shows).
fn b64(bytes: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in bytes.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..=c.len() {
            out.push(char::from(T[((n >> (18 - 6 * i)) & 63) as usize]));
        }
    }
    out
}

#[test]
fn a_secret_in_base64_wrapped_in_lines_is_redacted_across_the_break() {
    const SECRET: &str = "https://hooks.example/T0W76/B0W76/wrapped-secret";
    register_secret(SECRET);
    let joined = |s: &str| {
        ["\\r\\n", "\\n", "\r\n", "\n"]
            .iter()
            .fold(s.to_string(), |t, e| t.replace(e, ""))
    };
    for (width, eol) in [(76, "\r\n"), (64, "\n"), (76, "\\r\\n"), (64, "\\n")] {
        for pad in 0..width {
            let body = format!("{}{{\"api_url\":\"{SECRET}\"}}", "p".repeat(pad));
            let text = b64(body.as_bytes());
            let lines: Vec<&str> = text
                .as_bytes()
                .chunks(width)
                .map(|c| std::str::from_utf8(c).unwrap())
                .collect();
            let echoed = format!("bad body:\n{}\nend", lines.join(&format!("{eol}  ")));
            let shown = redact(&echoed);
            let left = joined(&shown);
            for aligned in 0..3 {
                let piece = b64(&[&b"pp"[..aligned], b"T0W76/B0W76/wrapped"].concat());
                assert!(
                    !left.contains(&piece[4..16]),
                    "width {width} {eol:?} pad {pad}: {shown}"
                );
            }
        }
    }
    // Wrapped base64 without a secret, and a long word before an ordinary line, are left as
    // they are.
    let plain = format!("{}\n{}\nsecond line", "QUJD".repeat(19), "QUJD".repeat(19));
    assert_eq!(redact(&plain), plain);
    let word = format!("{}\nwrapped-secret is a word here", "a".repeat(60));
    assert_eq!(redact(&word), word);
}

#[test]
fn a_secret_inside_a_longer_base64_text_is_redacted_at_every_offset() {
    const SECRET: &str = "https://hooks.example/T0B64/B0B64/offset-secret";
    register_secret(SECRET);
    for offset in 0..3 {
        for tail in ["", "x", "\"}}"] {
            let body = format!("{}{{\"api_url\":\"{SECRET}{tail}", "p".repeat(offset));
            let echoed = format!("bad body: {}", b64(body.as_bytes()));
            let shown = redact(&echoed);
            assert!(
                shown.contains("[REDACTED]"),
                "offset {offset}, tail {tail:?}: {shown}"
            );
            // What is left, decoded, holds no more than a few bytes of the secret.
            let left: String = shown.split("[REDACTED]").collect::<Vec<_>>().join("");
            assert!(
                !left.contains(&b64(b"T0B64")[..4]),
                "offset {offset}: {shown}"
            );
            for aligned in 0..3 {
                let piece = b64(&[&b"pp"[..aligned], b"T0B64/B0B64/offset"].concat());
                assert!(
                    !shown.contains(&piece[4..12]),
                    "offset {offset}/{aligned}: {shown}"
                );
            }
        }
    }
}

/// One automaton over every form's start finds what searching each form on its own finds.
#[test]
fn the_automaton_finds_what_each_form_alone_finds() {
    use super::redact::{redact, Forms};
    let secrets = [
        "hooks/sl?ck>secret-1",
        "xoxb-0123456789-abcdef",
        "pass word ünï 12",
        "hooks/sl?ck>s",
    ];
    let (mut together, mut alone) = (Forms::new(), Forms::new());
    for s in secrets {
        together.extend(forms_of(s));
        alone.extend(forms_of(s));
    }
    let alone = alone.one_by_one();
    let texts = [
        "a hooks/sl?ck>secret-1 b HOOKS/SL?CK>SECRET-1 c hooks/sl?ck>s d",
        "cut: xoxb-0123456789-ab\nnext \"xoxb-0123456789\" …",
        "pass+word+%C3%BCn%C3%AF+12 and cGFzcyB3b3JkIMO8bsOvIDEy and aG9va3Mvc2w/Y2s+c2VjcmV0LTE=",
        "{\"u\":\"hooks\\/sl?ck\\u003esecret-1\"} nothing else here",
    ];
    for text in texts {
        let (a, b) = (
            redact(text, &together, &[], "[R]"),
            redact(text, &alone, &[], "[R]"),
        );
        assert_eq!(a, b, "{text}");
        assert!(a.contains("[R]"), "{text} -> {a}");
    }
}

#[test]
fn a_secret_split_across_writes_is_redacted() {
    register_secret("split-secret-77");
    let mut out = Vec::new();
    {
        let mut w = Guarded::new(&mut out);
        w.write_all(b"a split-sec").unwrap();
        w.write_all(b"ret-77 b\nsecond").unwrap();
    }
    assert_eq!(String::from_utf8(out).unwrap(), "a [REDACTED] b\nsecond");
}

#[test]
fn the_pieces_written_do_not_change_what_is_written() {
    register_secret("piece-secret-31");
    let text = "plain line\n  ::warning::x\na piece-secret-31 b\u{1b}[1mbold\u{1b}[0m\r\u{7}\n\
                \u{202e}rtl \u{e9}t\u{e9} \"{\\\"k\\\": 1}\"\n\nno newline at the end";
    let whole = guarded(text);
    assert!(
        whole.contains("a [REDACTED] b") && whole.contains("\\::warning"),
        "{whole}"
    );
    for size in [1, 2, 3, 5, 8, 13, 64] {
        let mut out = Vec::new();
        {
            let mut w = Guarded::new(&mut out);
            for piece in text.as_bytes().chunks(size) {
                w.write_all(piece).unwrap();
            }
        }
        assert_eq!(String::from_utf8(out).unwrap(), whole, "pieces of {size}");
    }
}

#[test]
fn url_secrets_are_registered_and_urls_shown_without_them() {
    register_url_secrets("https://user:pw-99xx@h.example.com/?token=q-token-5&a=b");
    assert_eq!(redact("pw-99xx and q-token-5"), "[REDACTED] and [REDACTED]");
    assert_eq!(
        display_url("https://user:pw@h.example.com/x?token=q"),
        "https://[REDACTED]@h.example.com/x?[REDACTED]"
    );
    assert_eq!(
        display_url("https://h.example.com/"),
        "https://h.example.com"
    );
    assert_eq!(display_url("not a url with secret"), "not…");
}

#[test]
fn inert_escapes_controls_and_bidi() {
    assert_eq!(
        Inert("a\nb\r\tc\u{1b}[2Jd\u{202e}").to_string(),
        "a\\nb\\r\\tc\\u001b[2Jd\\u202e"
    );
    assert_eq!(Inert("plain é").to_string(), "plain é");
}

#[test]
fn markdown_neutralises_html_and_markdown() {
    let shown = Markdown("x</code></summary>\n# [pwn](https://e.example)|`*").to_string();
    assert_eq!(
        shown,
        "x&lt;/code&gt;&lt;/summary&gt;&#92;n&#35; &#91;pwn&#93;&#40;https://e.example&#41;&#124;&#96;&#42;"
    );
    assert_eq!(Markdown("a-b.c").to_string(), "a-b.c");
}

#[test]
fn code_spans() {
    assert_eq!(
        code_span("https://t.example.com"),
        "`https://t.example.com`"
    );
    assert_eq!(code_span("a``b\n"), "``` a``b\\n ```");
}

#[test]
fn no_line_starts_a_workflow_command_unless_meant() {
    assert_eq!(
        guarded("ok\n::warning file=x::pwn\n  ::error::y\n##[set-output]z\n"),
        "ok\n\\::warning file=x::pwn\n  \\::error::y\n\\##[set-output]z\n"
    );
    let mut out = Vec::new();
    {
        let mut w = Guarded::new(&mut out);
        w.write_all(b"text ").unwrap();
        w.command("::error file=a.yaml,line=1::m").unwrap();
    }
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "text \n::error file=a.yaml,line=1::m\n"
    );
}

#[test]
fn printable_lines_take_the_short_way_to_the_same_result() {
    for line in [
        "  + name: \"x\"",
        "\t::warning::x",
        " ##[group]",
        "plain",
        "",
        "~}{|",
    ] {
        let mut slow = escaped(line);
        let trimmed = slow.trim_start();
        if trimmed.starts_with("::") || trimmed.starts_with("##[") {
            let at = slow.len() - trimmed.len();
            slow.insert(at, '\\');
        }
        assert_eq!(guard_line(line, false), slow, "{line:?}");
    }
    assert_eq!(guard_line("a\u{7f}b", false), "a\\u007fb");
}

#[test]
fn stray_controls_are_escaped_but_colours_pass() {
    assert_eq!(
        guarded("\u{1b}[1;31merror\u{1b}[0m: a\rb\u{7}\u{1b}]0;title\n"),
        "\u{1b}[1;31merror\u{1b}[0m: a\\rb\\u0007\\u001b]0;title\n"
    );
}

#[test]
fn workflow_escaping() {
    assert_eq!(workflow_data("100%\r\nx"), "100%25%0D%0Ax");
    assert_eq!(workflow_property("a:b,c"), "a%3Ab%2Cc");
}

/// Records each `write` call, as an unbuffered stream sees them.
struct Calls(Vec<Vec<u8>>);

impl Write for Calls {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.push(buf.to_vec());
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_guarded_line_is_one_write_with_its_newline() {
    let mut calls = Calls(Vec::new());
    {
        let mut w = Guarded::new(&mut calls);
        let address = "Team/a";
        write!(w, "created {address}").unwrap();
        writeln!(w, " (3 ms)").unwrap();
        w.write_all(b"x\x1by\nlast").unwrap();
    }
    let calls: Vec<String> = calls
        .0
        .iter()
        .map(|c| String::from_utf8(c.clone()).unwrap())
        .collect();
    assert_eq!(calls, ["created Team/a (3 ms)\n", "x\\u001by\n", "last"]);
}

#[test]
fn buffered_stdout_guards_like_stdout() {
    let mut out = Vec::new();
    {
        let mut w = Guarded::new(io::BufWriter::new(&mut out));
        w.write_all(b"::warning::x\nok\n").unwrap();
        w.flush().unwrap();
    }
    assert_eq!(
        String::from_utf8(out).unwrap(),
        guarded("::warning::x\nok\n")
    );
}

/// R4-1: a server may echo the request body in any JSON dialect, escape it again, encode it
/// for a URL or HTML, or cut it short. What is printed is normalised before it is searched.
#[test]
fn a_secret_is_redacted_in_every_dialect_a_server_may_echo() {
    let url = "https://hooks.slack.com/services/T0R4ONE/B0R4ONE/r4oneXYZsecret";
    register_secret(url);
    let escaped_slashes = url.replace('/', "\\/");
    for echo in [
        format!(r#"{{"api_url":"{escaped_slashes}"}}"#),
        // JSON inside a JSON string: the slashes and quotes escaped twice.
        format!(
            r#"{{"body":"{{\"api_url\":\"{}\"}}"}}"#,
            url.replace('/', "\\\\\\/")
        ),
        // Every character as a \u escape (any server may choose to).
        url.chars()
            .map(|c| format!("\\u{:04x}", u32::from(c)))
            .collect::<String>(),
        url.replace('/', "%2F").replace(':', "%3a"),
        url.replace('/', "&#x2F;"),
        url.replace('/', "&#47;"),
    ] {
        let shown = redact(&echo);
        assert!(!shown.contains("r4oneXYZsecret"), "{echo} -> {shown}");
        assert!(shown.contains(REDACTED), "{echo} -> {shown}");
        let line = guarded(&format!("error: 400: {echo}\n"));
        assert!(!line.contains("r4oneXYZsecret"), "{line}");
    }
    // Go's encoding/json escapes <, > and & as \u003c, \u003e, \u0026.
    let go = "k<ey>&r4-go-secret-value";
    register_secret(go);
    let shown = redact(r#"{"token":"k\u003cey\u003e\u0026r4-go-secret-value"}"#);
    assert_eq!(shown, r#"{"token":"[REDACTED]"}"#);
    // Python's json.dumps escapes every non-ASCII character.
    register_secret("pässwört-r4-py");
    let shown = redact(r#"{"password": "p\u00e4ssw\u00f6rt-r4-py"}"#);
    assert_eq!(shown, r#"{"password": "[REDACTED]"}"#);
    // A character outside the BMP as a surrogate pair.
    register_secret("emoji-\u{1F511}-r4-key");
    assert_eq!(redact("x emoji-\\ud83d\\udd11-r4-key y"), "x [REDACTED] y");
}

#[test]
fn a_secret_cut_short_by_a_truncated_echo_is_redacted() {
    let secret = "xoxb-r4trunc-0123456789-abcdefghij";
    register_secret(secret);
    for cut in [10, 14, 20, secret.len() - 1] {
        let prefix = &secret[..cut];
        for echo in [
            format!(r#"400: {{"api_token":"{prefix}"#),
            format!("400: {{\"api_token\":\"{prefix}...\"}}"),
            format!("400: {{\"api_token\":\"{prefix}…"),
            format!("400: value {prefix}\nnext line"),
            format!(
                "400: {{\"api_token\":\"{}\"}} (n.yaml:1)",
                &secret[..secret.len() - 3]
            ),
            format!("400: {{\"api_token\":\"{prefix}\"}}"),
        ] {
            let shown = redact(&echo);
            assert!(!shown.contains(prefix), "{echo} -> {shown}");
            assert!(shown.contains(REDACTED), "{echo} -> {shown}");
        }
    }
    // A word that starts like the secret and goes on in prose is no cut.
    register_secret("redirect-secret");
    assert_eq!(
        redact("GET /x: redirect refused: a redirect to another host"),
        "GET /x: redirect refused: a redirect to another host"
    );
    // A short shared start is no leak: what is printed stays readable.
    assert_eq!(redact("xoxb-r4 is a prefix"), "xoxb-r4 is a prefix");
    // Text that shares a start with the secret and goes on differently is not the secret.
    assert_eq!(
        redact("xoxb-r4trunc-0123456789-zzz"),
        "xoxb-r4trunc-0123456789-zzz"
    );
}

#[test]
fn text_without_secrets_or_escapes_is_borrowed_and_escapes_stay_as_written() {
    register_secret("r4-borrowed-secret");
    assert!(matches!(redact("plain text"), Cow::Borrowed(_)));
    // Escapes around a redacted secret are kept as they were written.
    assert_eq!(
        redact(r#"{"a":"x\/y","b":"r4-borrowed-secret","c":"\u00e4%41"}"#),
        r#"{"a":"x\/y","b":"[REDACTED]","c":"\u00e4%41"}"#
    );
}

mod dialects {
    use super::*;
    use proptest::prelude::*;

    /// One way a server may write a character inside a JSON string.
    fn written(c: char, way: u8) -> String {
        match (way % 5, c) {
            (0, c) => serde_json::to_string(&c.to_string())
                .unwrap()
                .trim_matches('"')
                .to_string(),
            (1, '/') => "\\/".into(),
            (1, c) if !c.is_ascii_alphanumeric() => {
                let mut units = [0u16; 2];
                c.encode_utf16(&mut units)
                    .iter()
                    .map(|u| format!("\\u{u:04x}"))
                    .collect()
            }
            (2, c) => {
                let mut units = [0u16; 2];
                c.encode_utf16(&mut units)
                    .iter()
                    .map(|u| format!("\\u{u:04X}"))
                    .collect()
            }
            (3, c) if !c.is_ascii_alphanumeric() => {
                let mut buf = [0u8; 4];
                c.encode_utf8(&mut buf)
                    .bytes()
                    .map(|b| format!("%{b:02X}"))
                    .collect()
            }
            (_, c) => c.to_string(),
        }
    }

    proptest! {
        /// Whatever mix of escapes a server chooses, character by character, and whether it
        /// escapes the result again inside another JSON string: the secret is not printed.
        #[test]
        fn no_dialect_prints_a_secret(
            secret in "[a-zA-Z0-9/:&<>?=+ä€😀._-]{12,40}",
            ways in proptest::collection::vec(any::<u8>(), 40),
            again in any::<bool>(),
        ) {
            prop_assume!(secret.trim() == secret);
            // This secret's forms alone: registering hundreds would slow every other test of
            // this process, which share the registry.
            let mut forms = super::super::redact::Forms::new();
            forms.extend(forms_of(&secret));
            let echoed: String = secret.chars().zip(ways.iter().cycle()).map(|(c, w)| written(c, *w)).collect();
            let echoed = if again { serde_json::to_string(&echoed).unwrap() } else { echoed };
            let text = format!("400 bad request: {{\"api_url\":\"{echoed}\"}} (n.yaml:1)");
            let shown = super::super::redact::redact(&text, &forms, &[], REDACTED);
            prop_assert!(shown.contains(REDACTED), "{text} -> {shown}");
            prop_assert!(!shown.contains(&secret), "{text} -> {shown}");
            prop_assert!(!shown.contains(&echoed), "{text} -> {shown}");
        }
    }
}

/// D18 of the red team: a URL secret echoed without its scheme, as its path, lower-cased and
/// percent-encoded, or in hex.
#[test]
fn a_url_secret_is_redacted_by_its_parts_in_any_case_and_in_hex() {
    let url = "https://hooks.slack.com/services/T0D18/B0D18/ZZsecretD18ZZ";
    register_secret(url);
    let hex: String = url.bytes().map(|b| format!("{b:02x}")).collect();
    for echo in [
        "sub=hooks.slack.com/services/T0D18/B0D18/ZZsecretD18ZZ".to_string(),
        "path=/services/T0D18/B0D18/ZZsecretD18ZZ".to_string(),
        "pctl=https%3a%2f%2fhooks.slack.com%2fservices%2ft0d18%2fb0d18%2fzzsecretd18zz".to_string(),
        format!("hex={hex}"),
        format!("HEX={}", hex.to_uppercase()),
    ] {
        let shown = redact(&echo);
        assert!(
            !shown.to_lowercase().contains("secretd18"),
            "{echo} -> {shown}"
        );
        assert!(!shown.contains(&hex[20..]), "{echo} -> {shown}");
        assert!(shown.contains(REDACTED), "{echo} -> {shown}");
    }
}

/// A name cfgctl.yaml declares (an environment's) is shown even where it is a prefix of a
/// secret: a cut-short echo of that length tells nothing the file does not. A longer cut, the
/// whole secret, and the name inside another word stay redacted (red team E3).
#[test]
fn a_declared_name_that_starts_a_secret_is_shown() {
    register_secret("QASTAGETOK-9f31");
    register_public("qastage");
    assert_eq!(redact("environments: qastage\n"), "environments: qastage\n");
    assert_eq!(redact("{\"qastage\": 1}"), "{\"qastage\": 1}");
    assert_eq!(redact("row qastage"), "row qastage");
    assert_eq!(redact("echo QASTAGETOK\n"), "echo [REDACTED]\n");
    assert_eq!(redact("QASTAGETOK-9f31"), "[REDACTED]");
    assert_eq!(redact("xqastage\n"), "x[REDACTED]\n");
    // In another case it is the secret's own start, echoed: redacted.
    assert_eq!(redact("QASTAGE\n"), "[REDACTED]\n");
}
