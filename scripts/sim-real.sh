#!/usr/bin/env bash
# scripts/sim-real.sh — runs `kerf sim` scenarios on both servers and prints their wall times
# side by side: the in-process API server (the default) and a real control plane
# (scripts/cluster.sh: etcd, kube-apiserver, kube-controller-manager, kube-scheduler, KWOK),
# a fresh one per scenario, stopped afterwards.
#
#   scripts/sim-real.sh [SCENARIO.yaml...]    (default: examples/*.yaml examples/scale/1000-pods.yaml)
#
# Environment: KERF (the kerf binary; default target/debug/kerf, built if missing).
# Each run's output is kept in target/sim-real/<scenario>.{in-process,real}.log; the exit
# code is 1 when any run failed on either server.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
KERF="${KERF:-target/debug/kerf}"
OUT=target/sim-real
mkdir -p "$OUT"
[[ -x $KERF ]] || cargo build -q -p kerf-cli --features tls
bash scripts/cluster.sh build >/dev/null

if (($# == 0)); then set -- examples/*.yaml examples/scale/1000-pods.yaml; fi

# wall SECONDS_START: elapsed seconds, one decimal.
wall() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
# result LOG: the run's summary line ("NAME: simulated D in W s; ...") or its error.
result() { grep -m1 -E '^[^ ]+: simulated |^error: ' "$1" || echo "no summary"; }

failed=0
printf '| scenario | simulated | in-process | real control plane | same decisions | cost in-process / real |\n|---|---|---|---|---|---|\n'
for f in "$@"; do
    name=$(basename "$f" .yaml)
    t0=$(date +%s.%N)
    if "$KERF" sim "$f" >"$OUT/$name.in-process.log" 2>&1; then a=$(wall "$t0"); else a="failed"; failed=1; fi
    cp_name="simreal-$$-${name//[^a-z0-9]/-}"
    cp_name=${cp_name:0:40}
    kc=$(bash scripts/cluster.sh up "$cp_name" 2>"$OUT/$name.cluster.log")
    t0=$(date +%s.%N)
    if "$KERF" sim "$f" --cluster "$kc" >"$OUT/$name.real.log" 2>&1; then b=$(wall "$t0"); else b="failed"; failed=1; fi
    bash scripts/cluster.sh down "$cp_name" >/dev/null 2>&1 || true
    sim=$(result "$OUT/$name.in-process.log" | sed -n 's/.*simulated \([^ ]*\) in.*/\1/p')
    # The same decisions: as many pods placed, NodeClaims launched, disruptions and
    # interruptions, and the same nodes at the end (cost differs with the real timings).
    facts() { result "$1" | sed -n 's/.*; \([0-9]* pods placed.*interruptions\?\);.*\(now [0-9]* nodes\?, [^ ]*\)$/\1, \2/p'; }
    cost() { result "$1" | sed -n 's/.*cost \(\$[0-9.]*\).*/\1/p'; }
    same=no
    [[ -n $(facts "$OUT/$name.real.log") && $(facts "$OUT/$name.in-process.log") == "$(facts "$OUT/$name.real.log")" ]] && same=yes
    printf '| %s | %s | %s s | %s s | %s | %s / %s |\n' "$name" "${sim:-?}" "$a" "$b" "$same" \
        "$(cost "$OUT/$name.in-process.log")" "$(cost "$OUT/$name.real.log")"
done
exit "$failed"
