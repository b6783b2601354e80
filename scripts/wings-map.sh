#!/usr/bin/env bash
# wings-map.sh DIR [WING...]
#
# Reorganises cfgctl's 35 top-level modules into wings (issue 40 item 1), in the git work tree
# DIR: `git mv`s the files, then rewrites the paths that name them. Idempotent: a step already
# done is skipped, so it can run again over a branch made from the old layout (a merge of
# work done in parallel) and over one that is already moved. With WING arguments, only the
# modules of those wings move (the commits of the move were made wing by wing).
#
# The mapping table (old top-level module -> wing): `crate::OLD` becomes `crate::WING::OLD`,
# `cfgctl::OLD` becomes `cfgctl::WING::OLD`, `src/OLD.rs` becomes `src/WING/OLD.rs`.
# A wing that is itself an old module (plan, ops, cli, apply, render, manifest, emulator)
# keeps its path and takes the others as children.
set -euo pipefail

MAP='
registry   api
spec       api
semantics  api
wire       api
docs       api
yaml       util
promql     util
jsonpath   util
json_string util
output     util
safe_write util
file_ref   util
test_support util
settings   config
environments config
pattern    config
diagnostic config
client     remote
state      remote
throttle   remote
drift      plan
secrets    plan
export     convert
pull       convert
import     convert
memo       ops
policy     ops
commands   cli
'
# Old top-level modules written as `NAME.rs` beside `NAME/` that stay top-level as wings:
# their root file becomes `NAME/mod.rs` (every wing is a folder with a mod.rs).
ROOTS='cli manifest render'

# What each new wing's mod.rs says.
declare -A SAYS=(
  [api]="The vendor's API as cfgctl knows it: the kinds registry, the embedded description and
//! its schemas, the field semantics, the wire forms of requests and pages, and the generated
//! reference."
  [util]="Building blocks that know nothing of the API: the output layer (the one way to the
//! terminal, secrets redacted), safe file writes, \`\${file:}\` reads, and the readers of YAML,
//! PromQL, JSON pointers and JSON strings."
  [config]="The repository's configuration: \`cfgctl.yaml\` (settings, environments), resource
//! patterns, and the located diagnostics every reader of the user's files reports with."
  [remote]="Talking to a target: the HTTP client, its adaptive throttle, and reading the target's
//! capabilities and current state."
  [convert]="Manifests written for the user: \`export\` (the target's state as new manifests),
//! \`pull\` (the target's changes back into existing manifests) and \`import\` (Prometheus and
//! Grafana files as manifests)."
)

DIR=${1:?usage: wings-map.sh DIR [WING...]}
shift
ONLY=" $* "
cd "$DIR"
[ -f src/lib.rs ] || { echo "wings-map.sh: $DIR/src/lib.rs not found" >&2; exit 1; }

selected() { [ "$ONLY" = "  " ] || [[ "$ONLY" == *" $1 "* ]]; }

# 1. Moves.
pairs=""
while read -r old wing; do
  [ -n "$old" ] || continue
  selected "$wing" || continue
  pairs+="$old $wing"$'\n'
  mkdir -p "src/$wing"
  if [ -f "src/$old.rs" ] && [ ! -e "src/$wing/$old.rs" ]; then git mv "src/$old.rs" "src/$wing/$old.rs"; fi
  if [ -d "src/$old" ] && [ ! -e "src/$wing/$old" ]; then git mv "src/$old" "src/$wing/$old"; fi
  # insta names a unit test's snapshot after its module path.
  find src -name "cfgctl__${old}__*.snap" -path '*/snapshots/*' | while read -r snap; do
    git mv "$snap" "$(dirname "$snap")/$(basename "$snap" | sed "s/^cfgctl__${old}__/cfgctl__${wing}__${old}__/")"
  done
done <<<"$MAP"
roots=""
for r in $ROOTS; do
  selected "$r" || continue
  roots+="$r "
  if [ -f "src/$r.rs" ] && [ ! -e "src/$r/mod.rs" ]; then git mv "src/$r.rs" "src/$r/mod.rs"; fi
done

# 2. Rewrites, 3. wing mod.rs files and lib.rs.
PAIRS="$pairs" ROOTS_DONE="$roots" python3 - <<'PY'
import os, re, subprocess
pairs = [l.split() for l in os.environ["PAIRS"].splitlines() if l.strip()]
roots = os.environ["ROOTS_DONE"].split()
wing_of = dict(pairs)
says = {}

def files(tops, exts):
    for top in tops:
        if os.path.isfile(top):
            yield top
            continue
        for d, dirs, names in os.walk(top):
            dirs[:] = [x for x in dirs if x != ".git"]
            for n in names:
                if n.endswith(exts):
                    yield os.path.join(d, n)

ident = r"[A-Za-z0-9_]"
def rewrite_paths(text, heads="crate|cfgctl"):
    for old, wing in pairs:
        # crate::OLD, $crate::OLD, cfgctl::OLD (and `pub(in crate::OLD)`), never crate::W::OLD.
        text = re.sub(rf"(?<!{ident})(?<!::)({heads})::{old}(?!{ident})", rf"\1::{wing}::{old}", text)
        # `use crate::{OLD::x, OLD}` groups: the names at the group's top level.
        def group(m):
            head, body = m.group(1), m.group(2)
            out, depth, start = [], 0, 0
            parts = []
            for i, c in enumerate(body):
                if c == "{": depth += 1
                elif c == "}": depth -= 1
                elif c == "," and depth == 0:
                    parts.append(body[start:i]); start = i + 1
            parts.append(body[start:])
            fixed = [re.sub(rf"^(\s*){old}(?!{ident})", rf"\1{wing}::{old}", p) for p in parts]
            return head + "{" + ",".join(fixed) + "}"
        text = re.sub(rf"((?<!::)(?:{heads})::)\{{((?:[^{{}}]|\{{[^{{}}]*\}})*)\}}", group, text)
    return text

def rewrite_src_paths(text):
    for r in roots:
        text = re.sub(rf"(?<![\w/.])src/{r}\.rs", f"src/{r}/mod.rs", text)
    for old, wing in pairs:
        text = re.sub(rf"(?<![\w/.])src/{old}(\.rs|/)", rf"src/{wing}/{old}\1", text)
    return text

def rewrite_structure(text):
    # tests/integration/structure.rs names src/'s folders relative to src/.
    for old, wing in pairs:
        text = re.sub(rf'path\.starts_with\("{old}"\)', f'path.starts_with("{wing}/{old}")', text)
    return text

changed = []
for path in files(["src", "tests", "benches", "fuzz/src", "fuzz/fuzz_targets", "examples"], (".rs",)):
    text = open(path).read()
    # Outside src/, `crate::` is a test or bench crate's own: only `cfgctl::` names the library.
    new = rewrite_src_paths(rewrite_paths(text, "crate|cfgctl" if path.startswith("src") else "cfgctl"))
    if path.endswith("structure.rs"):
        new = rewrite_structure(new)
    if new != text:
        open(path, "w").write(new); changed.append(path)
for path in list(files(["src", "tests"], (".snap", ".py"))) + [p for p in ["Cargo.toml", "clippy.toml"] if os.path.exists(p)]:
    text = open(path).read()
    new = rewrite_src_paths(text)
    if new != text:
        open(path, "w").write(new); changed.append(path)

# A moved file's relative include_str!/#[path] going up (`../spec/...`) gains a `../` when the
# file now stands a folder deeper (checked against the disk, so a second run changes nothing).
rel = re.compile(r'(include_str!\(|include_bytes!\(|#\[path = )"((?:\.\./)+[^"]+)"')
for path in files(["src"], (".rs",)):
    text = open(path).read()
    def fix(m):
        here = os.path.dirname(path)
        if os.path.exists(os.path.join(here, m.group(2))):
            return m.group(0)
        deeper = "../" + m.group(2)
        if os.path.exists(os.path.join(here, deeper)):
            return f'{m.group(1)}"{deeper}"'
        return m.group(0)
    new = rel.sub(fix, text)
    if new != text:
        open(path, "w").write(new); changed.append(path)

# Each wing's mod.rs declares its members.
wings = {}
for old, wing in pairs:
    wings.setdefault(wing, []).append(old)
for wing, members in wings.items():
    mod = f"src/{wing}/mod.rs"
    text = open(mod).read() if os.path.exists(mod) else ""
    lines = text.splitlines()
    # The wing declares its members: an import of one of them in its own mod.rs is dropped.
    lines = [l for l in lines if l.strip() not in {f"use crate::{wing}::{old};" for old in members}]
    for old in members:
        decl = f"pub mod {old};" if old != "test_support" else "pub(crate) mod test_support;"
        if any(re.fullmatch(rf"\s*(pub(\([a-z]+\))? )?mod {old};", l) for l in lines):
            continue
        if old == "test_support":
            decl = "#[cfg(test)]\n" + decl
        at = max([i for i, l in enumerate(lines[:60]) if re.match(r"(pub(\([a-z]+\))? )?mod \w+;", l)], default=None)
        if at is None:
            at = max([i for i, l in enumerate(lines) if l.startswith("//!")], default=-1)
            if not text:
                lines = ["//! " + os.environ.get("SAYS_" + wing, wing), ""]
                at = len(lines) - 1
        lines[at + 1:at + 1] = decl.splitlines()
    open(mod, "w").write("\n".join(lines) + "\n")
    changed.append(mod)

# lib.rs declares the wings.
lib = open("src/lib.rs").read()
lib = re.sub(r"#\[cfg\(test\)\]\nmod test_support;\n", "", lib) if "test_support" in wing_of else lib
decls = re.findall(r"^pub mod (\w+);\n", lib, re.M)
keep = sorted({d for d in decls if d not in wing_of} | set(wings))
first = lib.index("pub mod ")
body = re.sub(r"^pub mod \w+;\n", "", lib, flags=re.M)
lib = body[:first] + "".join(f"pub mod {m};\n" for m in keep) + body[first:]
open("src/lib.rs", "w").write(lib)
PY

# The new wings' captions (python wrote a placeholder when it created the file).
for wing in "${!SAYS[@]}"; do
  f="src/$wing/mod.rs"
  [ -f "$f" ] || continue
  if head -1 "$f" | grep -qx "//! $wing"; then
    { printf '//! %s\n' "${SAYS[$wing]}"; tail -n +2 "$f"; } >"$f.tmp" && mv "$f.tmp" "$f"
  fi
done

# The rewritten `use` lines sort anew.
if command -v cargo >/dev/null; then cargo fmt --all; fi
echo "wings-map.sh: done in $DIR"
