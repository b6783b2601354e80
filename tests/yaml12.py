#!/usr/bin/env python3
"""How another YAML 1.2 reader (ruamel.yaml, pure Python, safe loader) reads texts.

Dev-only helper for cfgctl's tests (`yaml::yaml12` in src/util/yaml/yaml12.rs). Reads a JSON list
of texts on stdin; writes a JSON list with, for each text, {"docs": [...]} (every document
that is not empty, as JSON) or {"error": "..."}.

ruamel.yaml is the one thing the test suite needs besides Rust and python3: when the machine
does not have it, it is installed once, pinned, into target/yaml12-deps (pip, from PyPI), so
`cargo test --locked` works on a fresh machine. Exits 3 with a message when that fails.
"""
import importlib
import json
import os
import subprocess
import sys

VERSION = "0.18.16"
DEPS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "target", "yaml12-deps")


def load():
    sys.path.insert(0, DEPS)
    try:
        from ruamel.yaml import YAML
        return YAML
    except ImportError:
        pass
    os.makedirs(DEPS, exist_ok=True)
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         "--no-deps", "--target", DEPS, f"ruamel.yaml=={VERSION}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    importlib.invalidate_caches()
    sys.modules.pop("ruamel", None)
    try:
        from ruamel.yaml import YAML
        return YAML
    except ImportError:
        sys.stderr.write(
            f"ruamel.yaml {VERSION} is missing and could not be installed into {DEPS} "
            f"({installed.stderr.strip()[:300]}): pip install 'ruamel.yaml=={VERSION}'\n"
        )
        sys.exit(3)


YAML = load()


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
