#!/usr/bin/env bash
# scripts/beside.sh — Kerf and the real Karpenter side by side on the same scenarios: for each
# scenario, two fresh control planes (scripts/cluster.sh), Kerf on one and Karpenter's KWOK
# provider (scripts/karpenter.sh) on the other, run at the same time by
# `kerf sim SCENARIO --compare karpenter-real`; then one table of every scenario's figures.
#
#   scripts/beside.sh [SCENARIO.yaml...]
#       (default: examples/*.yaml examples/scale/1000-pods.yaml examples/scale/1000-out-700-in.yaml)
#   scripts/beside.sh --table    the table again from the logs of earlier runs
#
# Environment: KERF (the kerf binary; default target/release/kerf, built if missing).
# Each run's output is kept in target/beside/<scenario>.log, the table in
# target/beside/table.md; the exit code is 1 when any run failed.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
KERF="${KERF:-target/release/kerf}"
OUT=target/beside
mkdir -p "$OUT"

# figure LOG NAME: the Kerf and Karpenter cells of a figure of the side-by-side table.
figure() {
    awk -v f="$2" 'index($0, f) == 1 { v = substr($0, length(f) + 1); gsub(/^ +| +$/, "", v); gsub(/  +/, " · ", v); print v; exit }' "$1"
}

# row LOG: the scenario's line of the table.
row() {
    local log=$1 name wall
    name=$(basename "$log" .log)
    if ! grep -q '^side by side' "$log"; then
        echo "| $name | failed: $(grep -m1 '^error' "$log" || tail -1 "$log") |"
        return
    fi
    wall=$(sed -n 's/^Kerf: .* in \([0-9.]*\) s;.*/\1/p' "$log" | head -1)
    printf '| %s | %s s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$name" "$wall" \
        "$(figure "$log" 'cost over the span')" "$(figure "$log" '$/h at the end')" \
        "$(figure "$log" 'NodeClaims launched')" "$(figure "$log" 'disruptions')" \
        "$(figure "$log" 'pod created → running p50 / p99')" \
        "$(figure "$log" 'pod created → its NodeClaim p50 / p99')" \
        "$(figure "$log" 'NodeClaim created → initialized p50 / p99')" \
        "$(figure "$log" 'disruptable → removed p50 / p99')" "$(figure "$log" 'pods evicted')" \
        "$(figure "$log" 'pods lost with their instance')" \
        "$(figure "$log" 'CPU (decisions)')" "$(figure "$log" 'peak memory')"
}

table() {
    echo '| scenario | wall | cost (Kerf · Karpenter) | $/h at the end | NodeClaims | disruptions | pod start p50 / p99 (n) | pod → its NodeClaim p50 / p99 (n) | NodeClaim → initialized p50 / p99 (n) | disruptable → removed p50 / p99 (n) | evicted | lost | CPU | peak memory |'
    echo '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|'
    local f
    for f in "$@"; do
        f=$(basename "$f")
        f=${f%.yaml}
        row "$OUT/${f%.log}.log"
    done
}

if [[ ${1:-} == --table ]]; then
    logs=()
    for l in "$OUT"/*.log; do [[ $l == *.cluster.log ]] || logs+=("$l"); done
    table "${logs[@]}" | tee "$OUT/table.md"
    exit 0
fi

[[ -x $KERF ]] || cargo build -q --release -p kerf-cli --features tls
bash scripts/cluster.sh build >/dev/null
bash scripts/karpenter.sh build >/dev/null
if (($# == 0)); then
    set -- examples/*.yaml examples/scale/1000-pods.yaml examples/scale/1000-out-700-in.yaml
fi

failed=0
for f in "$@"; do
    name=$(basename "$f" .yaml)
    tag="bs-$$-${name//[^a-z0-9]/-}"
    tag=${tag:0:36}
    kc1=$(bash scripts/cluster.sh up "$tag-k" 2>"$OUT/$name.cluster.log")
    kc2=$(KERF_CLUSTER_KWOK_SELECTOR=kwok.x-k8s.io/node=fake bash scripts/cluster.sh up "$tag-c" 2>>"$OUT/$name.cluster.log")
    if ! "$KERF" sim "$f" --compare karpenter-real --cluster "$kc1" --karpenter-cluster "$kc2" >"$OUT/$name.log" 2>&1; then
        failed=1
    fi
    bash scripts/cluster.sh down "$tag-k" >/dev/null 2>&1 || true
    bash scripts/cluster.sh down "$tag-c" >/dev/null 2>&1 || true
    row "$OUT/$name.log"
done
table "$@" | tee "$OUT/table.md"
exit "$failed"
