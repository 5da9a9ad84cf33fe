#!/usr/bin/env bash
# Installs what Kerf's tests or its packaging need on a fresh machine, pinned, in ./.venv.
# Safe to run repeatedly.
#
#   scripts/setup.sh           the tests (`make test`): the moto server, cfn-lint, the SAM CLI,
#                              cargo-nextest when it is missing, and Debian's chromium (the
#                              `kerf sim --report` page is rendered headless), and Debian's
#                              kubectl in .venv/bin (`kerf sim --serve` is tested with it)
#   scripts/setup.sh package   packaging (`make package`): the SAM CLI, cargo-lambda (which
#                              brings zig) and the arm64 Rust target when it can be downloaded
set -euo pipefail
cd "$(dirname "$0")/.."

MOTO_VERSION="5.2.1"
NEXTEST_VERSION=0.9.151
CFN_LINT_VERSION="1.58.0"
SAM_CLI_VERSION="1.170.0"
CARGO_LAMBDA_VERSION="1.9.2"

pip_install() {
  .venv/bin/pip install --quiet --disable-pip-version-check "$@"
}

venv() {
  if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
  fi
}

sam_cli() {
  if [ "$(.venv/bin/sam --version 2>/dev/null)" != "SAM CLI, version $SAM_CLI_VERSION" ]; then
    pip_install "aws-sam-cli==$SAM_CLI_VERSION"
  fi
  # The SAM CLI brings a cfn-lint of its own: this pin wins.
  if [ "$(.venv/bin/cfn-lint --version 2>/dev/null)" != "cfn-lint $CFN_LINT_VERSION" ]; then
    pip_install "cfn-lint==$CFN_LINT_VERSION"
  fi
}

packaging() {
  if [ "$(.venv/bin/cargo-lambda lambda --version 2>/dev/null | cut -d' ' -f1-2)" != "cargo-lambda $CARGO_LAMBDA_VERSION" ]; then
    pip_install "cargo-lambda==$CARGO_LAMBDA_VERSION"
  fi
  # The functions run on arm64; `make package` builds x86_64 when this target is missing.
  if ! rustup target list --installed 2>/dev/null | grep -qx aarch64-unknown-linux-gnu; then
    rustup target add aarch64-unknown-linux-gnu || echo "setup: no arm64 Rust target; make package builds x86_64"
  fi
}

venv
sam_cli
if [ "${1:-}" = "package" ]; then
  packaging
  exit 0
fi

if ! .venv/bin/python -c "import moto, sys; sys.exit(0 if moto.__version__ == '$MOTO_VERSION' else 1)" 2>/dev/null; then
  pip_install "moto[server]==$MOTO_VERSION"
fi
# .config/nextest.toml uses test groups and priorities (0.9.91 and later).
if ! cargo nextest --version 2>/dev/null | grep -q "^cargo-nextest $NEXTEST_VERSION "; then
  cargo install cargo-nextest --locked --version "$NEXTEST_VERSION"
fi
if ! command -v chromium >/dev/null 2>&1; then
  SUDO=""
  if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium
fi
if [ ! -x .venv/bin/kubectl ]; then
  # Debian's kubectl, unpacked into .venv so that it never replaces a kubectl already installed.
  dir="$(mktemp -d)"
  if ! (cd "$dir" && apt-get download -qq kubernetes-client 2>/dev/null); then
    SUDO=""
    if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    (cd "$dir" && apt-get download -qq kubernetes-client)
  fi
  dpkg-deb -x "$dir"/kubernetes-client_*.deb .venv/kubernetes-client
  ln -sf ../kubernetes-client/usr/bin/kubectl .venv/bin/kubectl
  rm -rf "$dir"
fi
