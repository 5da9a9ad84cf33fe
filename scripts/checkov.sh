#!/usr/bin/env bash
# Runs checkov on the plain CloudFormation that template.yaml becomes once the SAM transform is
# applied: the template is expanded offline with the SAM translator in .venv (scripts/setup.sh)
# into target/checkov/template.expanded.json, then checked by a pinned checkov installed in its
# own virtualenv, .venv-checkov. The checks skipped, each with its reason, are in .checkov.yaml.
# Exits non-zero when checkov reports a failed check that is not skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

CHECKOV_VERSION="3.3.30"
OUT=target/checkov
EXPANDED="$OUT/template.expanded.json"

# The SAM translator comes with the SAM CLI that scripts/setup.sh installs in .venv.
if ! .venv/bin/python -c "import samtranslator" 2>/dev/null; then
  scripts/setup.sh
fi

# checkov pins its own boto3, PyYAML and friends: a virtualenv of its own keeps .venv's pins.
if [ ! -x .venv-checkov/bin/python ]; then
  python3 -m venv .venv-checkov
fi
if [ "$(.venv-checkov/bin/checkov --version 2>/dev/null)" != "$CHECKOV_VERSION" ]; then
  .venv-checkov/bin/pip install --quiet --disable-pip-version-check "checkov==$CHECKOV_VERSION"
fi

mkdir -p "$OUT"
# The translator wants a region (for ARNs it writes out) and S3 code locations; it reads no
# credentials and calls no AWS API.
AWS_DEFAULT_REGION=us-east-1 .venv/bin/python - template.yaml "$EXPANDED" <<'PY'
import json
import sys

from samtranslator.translator.transform import transform
from samtranslator.yaml_helper import yaml_parse


class ManagedPolicies:
    """The managed policies the translator may look up by name: the template names none (its
    functions bring their own roles), so the map is empty."""

    def load(self):
        return {}


src, dst = sys.argv[1], sys.argv[2]
with open(src) as f:
    template = yaml_parse(f.read())

# `sam package` replaces each local CodeUri with the S3 location it uploads it to.
for resource in template.get("Resources", {}).values():
    props = resource.get("Properties") or {}
    code = props.get("CodeUri")
    if resource.get("Type") == "AWS::Serverless::Function" and isinstance(code, str) and not code.startswith("s3://"):
        props["CodeUri"] = f"s3://kerf-artifacts/{code}"

expanded = transform(template, {}, ManagedPolicies())
with open(dst, "w") as f:
    json.dump(expanded, f, indent=2, sort_keys=True)
    f.write("\n")
print(f"checkov: {src} expanded to {dst} ({len(expanded['Resources'])} resources)")
PY

# --skip-download: no guideline or policy download from the checkov vendor's platform.
.venv-checkov/bin/checkov \
  --config-file .checkov.yaml \
  --framework cloudformation \
  --file "$EXPANDED" \
  --compact \
  --quiet \
  --skip-download
