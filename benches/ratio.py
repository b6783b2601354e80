#!/usr/bin/env python3
"""A no-change plan against the harness's own download floor, alternated, with no polling.

    python3 benches/ratio.py ../shared/perf PORT ROUNDS BIN...

PORT is an emulator already holding the realistic repository (`serve --page-size 100`, then
`BIN apply DIR --auto-approve`); DIR is /tmp/repo10k (`python3 ../shared/perf/perf.py --cfgctl x
--n 10000 --emit-only /tmp/repo10k`). Each round runs one remembered plan of each binary
(`subprocess.run`, timed to its exit) and then the harness's `download_floor`, so the binaries
and the floor see the same machine minute. The harness itself waits with `Popen.wait(timeout)`,
which polls in steps of up to 50 ms (docs/performance.md); this does not. Set
RATIO_FRESH_HOME=1 in the environment to time cold plans as the harness does (a fresh, empty
HOME for each run: the memo is there but holds nothing), or CFGCTL_NO_CACHE=1 to time plans
without the memo at all.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

harness, port, rounds, bins = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
sys.path.insert(0, harness)
import manifests as mf  # noqa: E402  (the harness's own modules)
import perf  # noqa: E402

repo = os.environ.get("RATIO_REPO", "/tmp/repo10k")
swagger = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}{perf.SWAGGER_PATH}"))
ops = perf.target_ops(swagger)
kinds = [k for k in mf.KINDS if "list" in ops.get(k, ()) and mf.KINDS[k][2] is not None]
extra = [perf.SWAGGER_PATH] + [perf.API + mf.KINDS[k][0] for k in mf.KINDS
                               if mf.KINDS[k][2] is None and "read" in ops.get(k, ())]
env = dict(os.environ, NO_COLOR="1")
fresh = os.environ.get("RATIO_FRESH_HOME") == "1"
scratch = tempfile.mkdtemp(prefix="ratio-")


def run(b):
    if fresh:
        env["HOME"] = tempfile.mkdtemp(dir=scratch)
    subprocess.run([b] + plan, env=env, stdout=subprocess.DEVNULL, check=True)


plan = ["--url", f"http://127.0.0.1:{port}", "--parallelism", "16", "plan", repo, "--format", "json",
        "--detailed-exitcode"]
times = {b: [] for b in bins}
times["floor"] = []
for b in bins:  # the first plan of each binary plans in full and is remembered
    run(b)
for _ in range(rounds):
    for b in bins:
        start = time.monotonic()
        run(b)
        times[b].append(time.monotonic() - start)
        times["floor"].append(perf.download_floor(port, None, kinds, extra, time.monotonic() + 60)["wall_s"])
floor = statistics.median(times["floor"])
for name, runs in times.items():
    median = statistics.median(runs)
    print(f"{os.path.basename(name):14} median {median:.3f}  ratio {median / floor:.2f}  "
          f"runs {' '.join(f'{x:.3f}' for x in runs)}")
