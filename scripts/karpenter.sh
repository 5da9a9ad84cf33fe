#!/usr/bin/env bash
# scripts/karpenter.sh — the real Karpenter for `kerf sim --compare karpenter-real`.
#
# Builds Karpenter's KWOK cloud provider (sigs.k8s.io/karpenter/kwok: Karpenter's own
# provisioner, scheduler, disruption, termination and NodeClaim lifecycle, with instances
# played by KWOK Nodes) from the Go module proxy, at the version bench/karpenter/go.mod pins,
# and copies its CRDs from the same module.
#
#   scripts/karpenter.sh build     target/karpenter/bin/karpenter, target/karpenter/crds/*.yaml
#   scripts/karpenter.sh version   the pinned sigs.k8s.io/karpenter version
#
# The module needs Go 1.26.9 or newer: GOTOOLCHAIN below makes the go command fetch that
# toolchain from the module proxy once per machine (the machine's own Go stays as it is).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC="$ROOT/bench/karpenter"
OUT="$ROOT/target/karpenter"
export GOTOOLCHAIN=go1.27.3 GOFLAGS="${GOFLAGS:+$GOFLAGS }-buildvcs=false"

log() { printf '[karpenter] %s\n' "$*" >&2; }
die() { printf '[karpenter] error: %s\n' "$*" >&2; exit 1; }

version() { (cd "$SRC" && go list -m -f '{{.Version}}' sigs.k8s.io/karpenter); }

cmd_build() {
    command -v go >/dev/null || die "go is not installed"
    local v dir t0=$SECONDS
    v=$(version)
    # `go list -m` names a module's directory only once it is in the module cache: fetch it
    # first, so a cold machine finds the CRDs too.
    (cd "$SRC" && go mod download sigs.k8s.io/karpenter)
    dir=$(cd "$SRC" && go list -m -f '{{.Dir}}' sigs.k8s.io/karpenter)
    [[ -d $dir/kwok ]] || die "sigs.k8s.io/karpenter $v is not in the module cache (go list gave '$dir')"
    mkdir -p "$OUT/bin" "$OUT/crds.tmp"
    log "building sigs.k8s.io/karpenter/kwok $v"
    (cd "$SRC" && nice -n 10 go build -ldflags "-s -w" -o "$OUT/bin/karpenter" sigs.k8s.io/karpenter/kwok)
    # Karpenter's CRDs (NodePool, NodeClaim, NodeOverlay, …) and the KWOK provider's node class.
    cp "$dir"/kwok/charts/crds/*.yaml "$dir"/kwok/apis/crds/*.yaml "$OUT/crds.tmp/"
    chmod u+w "$OUT"/crds.tmp/*.yaml
    rm -rf "$OUT/crds" && mv "$OUT/crds.tmp" "$OUT/crds"
    echo "$v" >"$OUT/bin/VERSION"
    log "built in $((SECONDS - t0))s: $OUT/bin/karpenter ($v), $(ls "$OUT/crds" | wc -l) CRDs"
}

case "${1:-}" in
build) cmd_build ;;
version) version ;;
*) die "usage: scripts/karpenter.sh build|version" ;;
esac
