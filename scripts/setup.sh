#!/usr/bin/env bash
# Installs what Kerf's tests need on a fresh machine: the pinned Python tools (moto server)
# in ./.venv, and cargo-nextest when it is missing. Safe to run repeatedly.
set -euo pipefail
cd "$(dirname "$0")/.."

MOTO_VERSION="5.2.1"
CFN_LINT_VERSION="1.58.0"

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
if ! .venv/bin/python -c "import moto, sys; sys.exit(0 if moto.__version__ == '$MOTO_VERSION' else 1)" 2>/dev/null; then
  .venv/bin/pip install --quiet --disable-pip-version-check "moto[server]==$MOTO_VERSION"
fi
if [ "$(.venv/bin/cfn-lint --version 2>/dev/null)" != "cfn-lint $CFN_LINT_VERSION" ]; then
  .venv/bin/pip install --quiet --disable-pip-version-check "cfn-lint==$CFN_LINT_VERSION"
fi

if ! cargo nextest --version >/dev/null 2>&1; then
  cargo install cargo-nextest --locked
fi
