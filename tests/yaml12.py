#!/usr/bin/env python3
"""How another YAML 1.2 reader (ruamel.yaml, pure Python, safe loader) reads texts.

Dev-only helper for cfgctl's tests (`yaml::yaml12` in src/yaml/yaml12.rs). Reads a JSON list
of texts on stdin; writes a JSON list with, for each text, {"docs": [...]} (every document
that is not empty, as JSON) or {"error": "..."}. Exits 3 with a message when ruamel.yaml is
missing (CI installs it: see .ci/run).
"""
import json
import sys

try:
    from ruamel.yaml import YAML
except ImportError:
    sys.stderr.write("ruamel.yaml is not installed: pip install 'ruamel.yaml==0.18.16'\n")
    sys.exit(3)


def read(text):
    yaml = YAML(typ="safe", pure=True)
    try:
        return {"docs": [d for d in yaml.load_all(text) if d is not None]}
    except Exception as e:  # any refusal: the caller compares refusals, not messages
        return {"error": f"{type(e).__name__}: {e}".splitlines()[0]}


def main():
    texts = json.load(sys.stdin)
    json.dump([read(t) for t in texts], sys.stdout, ensure_ascii=True)


if __name__ == "__main__":
    main()
