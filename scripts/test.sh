#!/usr/bin/env bash
# Kerf's whole test suite: installs what it needs, then format, lints, template checks and
# a bounded run of every fuzz target, then every test in the workspace (engine, catalog, CLI
# scenarios, the template and RBAC against the code, API, in-process API server, kube adapter,
# AWS adapter against moto, kubectl against `kerf sim --serve`, Kerf against a real control plane
# built from Go modules).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh

echo "== cargo fetch"
# Every package of Cargo.lock, for every platform: the template test reads `cargo metadata
# --offline`, which needs them all, not only those this machine builds.
cargo fetch --locked

echo "== cargo fmt --check"
cargo fmt --all -- --check

echo "== cargo clippy"
cargo clippy --workspace --all-targets --all-features -- -D warnings

echo "== cfn-lint template.yaml"
.venv/bin/cfn-lint template.yaml

echo "== sam validate --lint"
SAM_CLI_TELEMETRY=0 .venv/bin/sam validate --lint --template template.yaml --region us-east-1

echo "== fuzz targets (20 s each)"
FUZZ_SECONDS=20 scripts/fuzz.sh
if [ -n "${CI:-}" ]; then
  # The fuzz build is not needed again here; its disk is, by the test binaries.
  rm -rf target/fuzz
fi

echo "== real control plane (etcd, Kubernetes, KWOK from Go modules; cached by Go's caches)"
# The real-cluster tests (tests/real) start it with scripts/cluster.sh up; a cold build takes
# about 20 minutes on 2 cores, a warm one seconds.
scripts/cluster.sh build

echo "== the real Karpenter (its KWOK provider from the Go module proxy, for tests/real/beside.rs)"
scripts/karpenter.sh build

echo "== cargo nextest"
cargo nextest run --workspace --all-features --no-fail-fast
