#!/usr/bin/env python3
"""Groups a `perf report` of cfgctl by kind of work, as docs/performance.md's "Where the time goes".

    perf record -F 999 -g -o plan.perf target/release/cfgctl --url URL plan DIR --format json
    perf report -i plan.perf --no-children --sort dso,symbol --stdio | python3 benches/perf_groups.py

Each symbol goes to the first group whose regular expression matches it.
"""
import re
import sys

GROUPS = [
    ("YAML parsing (block reader; serde-saphyr where it gives up)", r"yaml::block|granit|saphyr|yaml::plain"),
    ("JSON parsing (list pages, embedded documents)",
     r"serde_json::read|serde_json::de|ValueVisitor|Deserialize for serde_json::value::Value|parse_str|"
     r"parse_escape|ignore_str|skip_to_escape|render::lines|DeserializeSeed|MapAccess|SeqAccess|from_utf8|"
     r"split_list_page"),
    ("Value maps (IndexMap + SipHash, hashbrown, BTreeMap, drops)",
     r"indexmap|hashbrown|sip::Hasher|hash_one|BTreeMap|btree|drop_in_place|BuildHasher"),
    ("serialising (canonical forms for digests)", r"serde_json::ser|Serialize for serde_json|format_escaped_str|fmt::write"),
    ("digests (BLAKE3)", r"blake3"),
    ("normalising, references, schema walks", r"normalize|registry::|Reference|newer|jsonschema|plan::"),
    ("allocator (jemalloc)",
     r"_rjem|je_|rallocx|sdallocx|tcache|arena|__rust_alloc|__rust_dealloc|__rust_realloc|no_alloc_shim|extent"),
    ("memcpy/memcmp/memchr", r"memmove|memcpy|memcmp|memset|memchr"),
    ("kernel", r"\[k\]"),
]


def main() -> None:
    totals = {name: 0.0 for name, _ in GROUPS}
    other = 0.0
    for line in sys.stdin:
        m = re.match(r"\s+([\d.]+)%\s+(\S+)\s+(\[.\])\s+(.*)", line)
        if not m:
            continue
        share, symbol = float(m.group(1)), f"{m.group(3)} {m.group(4)}"
        for name, pattern in GROUPS:
            if re.search(pattern, symbol):
                totals[name] += share
                break
        else:
            other += share
    for name, _ in GROUPS:
        print(f"{totals[name]:5.1f}%  {name}")
    print(f"{other:5.1f}%  other")


if __name__ == "__main__":
    main()
