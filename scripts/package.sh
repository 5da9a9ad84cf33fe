#!/usr/bin/env bash
# Builds every function's Lambda artifact with `sam build` (cargo-lambda and zig from .venv;
# arm64 when the arm64 Rust target is installed, else x86_64), then zips each bootstrap as
# `sam deploy` uploads it and prints its size. Fails when an artifact is over 8 MiB zipped.
set -euo pipefail
cd "$(dirname "$0")/.."

export PATH="$PWD/.venv/bin:$PATH" SAM_CLI_TELEMETRY=0
LIMIT=$((8 * 1024 * 1024))

arch=arm64
if ! rustup target list --installed 2>/dev/null | grep -qx aarch64-unknown-linux-gnu; then
  arch=x86_64
  echo "package: the arm64 Rust target is missing; building x86_64 (deploy with Architecture=x86_64)"
fi

# `make lambda` writes plain binaries where cargo-lambda keeps one directory per binary.
for f in target/lambda/*; do
  if [ -f "$f" ]; then rm -f "$f"; fi
done

sam build --template template.yaml --parameter-overrides "Architecture=$arch"

status=0
printf '%-24s %10s %10s\n' FUNCTION BINARY ZIPPED
for dir in .aws-sam/build/*Function; do
  name=$(basename "$dir")
  rm -f "$dir.zip"
  (cd "$dir" && zip -q -X -9 "../$name.zip" bootstrap)
  bin=$(stat -c %s "$dir/bootstrap")
  zipped=$(stat -c %s "$dir.zip")
  printf '%-24s %10s %10s\n' "$name" "$bin" "$zipped"
  if [ "$zipped" -gt "$LIMIT" ]; then
    echo "package: $name is over 8 MiB zipped" >&2
    status=1
  fi
done
exit $status
