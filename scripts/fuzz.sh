#!/usr/bin/env bash
# Fuzzes the inputs Kerf reads from outside, with cargo-fuzz (installed here when missing):
# interruption messages, AdmissionReview requests, the manifests of `kerf plan` and
# `kerf migrate`, `kerf sim` scenarios, quantities, and the fast YAML reader against the full
# one. Each target runs FUZZ_SECONDS (default 60; `make test` runs 20), one per core at a time,
# starting from the project's own samples and from what earlier runs kept in fuzz/corpus (not
# committed). Prints executions and findings per
# target; exits 1 when a target fails (the input that failed is in fuzz/artifacts/).
#
#   make fuzz                     every target, 60 s each
#   FUZZ_SECONDS=600 make fuzz    longer, by hand
set -euo pipefail
cd "$(dirname "$0")/.."

CARGO_FUZZ_VERSION="0.13.2"
SECONDS_EACH="${FUZZ_SECONDS:-60}"
# Coverage instrumentation without a sanitizer needs no nightly toolchain; the dev profile
# keeps the build short.
FLAGS=(--dev --sanitizer none --target-dir target/fuzz)

if [ "$(cargo fuzz --version 2>/dev/null)" != "cargo-fuzz $CARGO_FUZZ_VERSION" ]; then
  cargo install cargo-fuzz --locked --version "$CARGO_FUZZ_VERSION"
fi

seeds=target/fuzz/seeds
rm -rf "$seeds"
mkdir -p "$seeds"/{interruption_message,admission_review,manifest,scenario,quantity,yaml}
python3 - "$seeds" <<'PY'
import base64, glob, json, os, sys
out = sys.argv[1]
def put(target, name, data):
    with open(os.path.join(out, target, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
# The EventBridge events the interruption queue carries (the SQS batch samples hold them
# as record bodies).
for path in glob.glob("events/sqs-interruption-batch.json"):
    for i, r in enumerate(json.load(open(path))["Records"]):
        put("interruption_message", f"record-{i}.json", r["body"])
for path in glob.glob("events/*.json"):
    name = os.path.basename(path)
    doc = json.load(open(path))
    if "detail-type" in doc:
        put("interruption_message", name, json.dumps(doc))
    if name.startswith("webhook-"):
        body = doc.get("body", "")
        put("admission_review", name, base64.b64decode(body) if doc.get("isBase64Encoded") else body)
for path in glob.glob("examples/getting-started/*.yaml") + glob.glob("shared/cli/tests/fixtures/**/*.yaml", recursive=True)[:40]:
    put("manifest", path.replace("/", "_"), open(path, "rb").read())
    put("yaml", path.replace("/", "_"), open(path, "rb").read())
# The JSON samples written in the block style `kubectl get -o yaml` uses, which the fast
# reader reads.
def block(v, indent=0):
    pad = " " * indent
    if isinstance(v, dict) and v:
        out = ""
        for k, x in v.items():
            nested = isinstance(x, (dict, list)) and x
            out += f"{pad}{json.dumps(k)}:" + ("\n" + block(x, indent + 2) if nested else f" {json.dumps(x)}\n")
        return out
    if isinstance(v, list) and v:
        return "".join(f"{pad}-" + ("\n" + block(x, indent + 2) if isinstance(x, (dict, list)) and x else f" {json.dumps(x)}\n") for x in v)
    return f"{pad}{json.dumps(v)}\n"
for path in glob.glob("events/*.json"):
    put("yaml", os.path.basename(path) + ".yaml", block(json.load(open(path))))
for path in glob.glob("examples/*.yaml"):
    put("scenario", os.path.basename(path), open(path, "rb").read())
for i, q in enumerate(["100m", "1.5Gi", "2e3", "0.5", "128974848", "1E", "-1", "7Ki", "1n"]):
    put("quantity", f"q{i}", q)
PY

echo "== cargo fuzz build"
cargo fuzz build "${FLAGS[@]}"

# One target per core at a time: libFuzzer runs each on one core.
run_target() {
  local t=$1 status=0
  mkdir -p "fuzz/corpus/$t"
  cargo fuzz run "${FLAGS[@]}" "$t" "fuzz/corpus/$t" "$seeds/$t" -- \
    -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 >"target/fuzz/$t.log" 2>&1 || status=$?
  echo "$status" >"target/fuzz/$t.status"
}
targets=$(cargo fuzz list)
for t in $targets; do
  while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do wait -n || true; done
  run_target "$t" &
done
wait

failed=0
printf "%-22s %12s %10s\n" target executions findings
for t in $targets; do
  log="target/fuzz/$t.log"
  status=$(cat "target/fuzz/$t.status")
  # A target that fails prints no `Done` line: no count, and the failure below.
  runs=$(grep -o 'Done [0-9]* runs' "$log" | awk '{print $2}' | tail -1 || true)
  findings=$(find "fuzz/artifacts/$t" -type f 2>/dev/null | wc -l)
  printf "%-22s %12s %10s\n" "$t" "${runs:-?}" "$findings"
  if [ "$status" != 0 ]; then
    failed=1
    echo "--- $t failed ($log):"
    grep -v '^#' "$log" | tail -40
  fi
done
exit "$failed"
