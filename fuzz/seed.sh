#!/usr/bin/env bash
# Writes the seed corpora of the fuzz targets from fixtures/ into fuzz/corpus/TARGET/.
# Run from fuzz/ after `cargo afl build --release` (the emulator seeds come from the target
# binary) with a cfgctl binary built in ../target/debug (for the saved-plan seeds).
set -euo pipefail
cd "$(dirname "$0")"
rm -rf corpus
mkdir -p corpus/manifest corpus/settings corpus/saved_plan corpus/emulator_request corpus/yaml_block corpus/description corpus/promql
cp ../spec/config-api-v1.swagger.json corpus/description/embedded.json

# The manifest target reads one file: the first byte picks YAML (even) or JSON (odd).
n=0
while IFS= read -r -d '' f; do
  n=$((n + 1))
  case "$f" in
    *.json) selector='\001' ;;
    *) selector='\000' ;;
  esac
  { printf "$selector"; cat "$f"; } > "corpus/manifest/fixture-$n"
done < <(find ../fixtures -type f \( -name '*.yaml' -o -name '*.yml' -o -name '*.json' \) ! -name cfgctl.yaml -print0 | sort -z)

# The block reader's target reads the YAML text itself: every YAML fixture, and a few shapes
# of the harness's realistic mix (a Perses mapping, a literal block, a one-line JSON string).
n=0
while IFS= read -r -d '' f; do
  n=$((n + 1))
  cp "$f" "corpus/yaml_block/fixture-$n"
done < <(find ../fixtures ../examples -type f \( -name '*.yaml' -o -name '*.yml' \) -print0 | sort -z)
printf -- '---\napi_version: v1/config\nkind: Dashboard\nspec:\n  slug: a-0\n  labels:\n    tier: gold\n  dashboard_json:\n    kind: Dashboard\n    spec:\n      duration: "6h"\n      panels:\n        - kind: Panel\n          spec:\n            queries: []\n            x: 0.5\n            y: -3\n' > corpus/yaml_block/mix-mapping
printf -- '---\nspec:\n  dashboard_json: |-\n    {\n      "title": "t",\n\n      "tags": ["a"]\n    }\n  name: x # c\n---\nspec:\n  dashboard_json: "{\\"a\\": \\"\\\\u00e9\\"}"\n' > corpus/yaml_block/mix-literal

# PromQL: a form byte, a repeat byte, the text repeated (bit 7 of the repeat byte: 256 times as
# many), so that short seeds reach the long and deep queries (`1+1+...`, `((((`).
printf '\000\377%s' '1+' > corpus/promql/sum-chain
printf '\000\020%s' '(' > corpus/promql/nested
printf '\000\000%s' 'sum by (job) (rate(http_requests_total{code=~"5.."}[5m])) > 0' > corpus/promql/query
printf '\001\003%s' 'service="checkout",' > corpus/promql/selector
printf '\002\000%s' 'sum(rate(x{a="b"}[{{ .Window }}]))' > corpus/promql/template
printf '\004\000%s' 'sum(rate(x{$job}[5m]))' > corpus/promql/variables
printf '\000\200%s' 'x ~' > corpus/promql/lexer-error

n=0
for f in $(find ../fixtures -name cfgctl.yaml | sort); do
  n=$((n + 1))
  cp "$f" "corpus/settings/fixture-$n"
done
printf 'prune: []\n' > corpus/settings/empty-prune
printf 'ignore:\n  - {kind: Dashboard, path: "a.b[0].c"}\nexclude: ["Team/x-*"]\n' > corpus/settings/ignore

# Saved plans: creates (against an empty local tenant), then updates and deletes.
cfgctl=../target/debug/cfgctl
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
"$cfgctl" --local="$scratch/t.db" plan ../fixtures/valid --out corpus/saved_plan/creates.json > /dev/null
"$cfgctl" --local="$scratch/t.db" apply ../fixtures/valid --auto-approve > /dev/null
cp -r ../fixtures/valid "$scratch/changed"
rm -r "$scratch/changed/dashboards"
sed -i 's/name: Platform/name: Platform team/' "$scratch/changed/teams/"*.yaml
"$cfgctl" --local="$scratch/t.db" plan "$scratch/changed" --prune --out corpus/saved_plan/updates-deletes.json > /dev/null

CFGCTL_FUZZ_WRITE_CORPUS=corpus/emulator_request target/release/emulator_request
for t in manifest settings saved_plan emulator_request; do
  echo "$t: $(ls corpus/$t | wc -l) seeds"
done
