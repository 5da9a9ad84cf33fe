#!/usr/bin/env python3
"""Extracts the Karpenter manifests from the seed walkthroughs into test fixtures.

The walkthroughs in ../shared/seeds/*.txt mix prose, shell sessions and YAML. This script
finds the YAML in them (heredoc bodies, Markdown fences, and bare manifests pasted into
prose), splits it into documents and writes every document whose kind is one Kerf reads or
rejects (NodePool, EC2NodeClass, NodeClaim, Provisioner, AWSNodeTemplate, AKSNodeClass) to
shared/api/tests/fixtures/seeds/seed<NNN>_<nn>_<kind>.yaml, one document per file.

Documents are kept as written: comments, quoting and placeholders such as ${CLUSTER_NAME}
stay. Only trailing whitespace is dropped, and a document whose indentation the write-up lost
(every line flush left) is re-indented from the shape of the Karpenter kinds; the header of
such a file says so.

Standard library only. Usage:

    python3 scripts/extract-seed-manifests.py [--seeds DIR] [--out DIR]
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SEEDS = ROOT.parent / "shared" / "seeds"
DEFAULT_OUT = ROOT / "shared" / "api" / "tests" / "fixtures" / "seeds"
COMMAND = "python3 scripts/extract-seed-manifests.py"

KINDS = ("NodePool", "EC2NodeClass", "NodeClaim", "Provisioner", "AWSNodeTemplate", "AKSNodeClass")

# --- The shape of the kinds, for re-indenting flattened documents --------------------------
#
# A schema is SCALAR, FREE (a map with arbitrary keys: labels, tags, limits, ...), a dict of
# known keys, or ("list", item schema). Versions are merged: v1alpha5, v1beta1 and v1 fields
# live side by side, which is enough to tell where each line belongs.

SCALAR = "scalar"
FREE = "free"


def lst(item):
    return ("list", item)


META = {
    "name": SCALAR,
    "namespace": SCALAR,
    "labels": FREE,
    "annotations": FREE,
    "finalizers": lst(SCALAR),
}
REQUIREMENT = {"key": SCALAR, "operator": SCALAR, "values": lst(SCALAR), "minValues": SCALAR}
TAINT = {"key": SCALAR, "value": SCALAR, "effect": SCALAR, "timeAdded": SCALAR}
KUBELET = {
    "clusterDNS": lst(SCALAR),
    "containerRuntime": SCALAR,
    "maxPods": SCALAR,
    "podsPerCore": SCALAR,
    "systemReserved": FREE,
    "kubeReserved": FREE,
    "evictionHard": FREE,
    "evictionSoft": FREE,
    "evictionSoftGracePeriod": FREE,
    "evictionMaxPodGracePeriod": SCALAR,
    "imageGCHighThresholdPercent": SCALAR,
    "imageGCLowThresholdPercent": SCALAR,
    "cpuCFSQuota": SCALAR,
}
NODE_CLASS_REF = {"group": SCALAR, "kind": SCALAR, "name": SCALAR, "apiVersion": SCALAR}
CLAIM_SPEC = {
    "taints": lst(TAINT),
    "startupTaints": lst(TAINT),
    "requirements": lst(REQUIREMENT),
    "nodeClassRef": NODE_CLASS_REF,
    "expireAfter": SCALAR,
    "terminationGracePeriod": SCALAR,
    "kubelet": KUBELET,
    "resources": {"requests": FREE},
}
BLOCK_DEVICE = {
    "deviceName": SCALAR,
    "rootVolume": SCALAR,
    "ebs": {
        "deleteOnTermination": SCALAR,
        "encrypted": SCALAR,
        "iops": SCALAR,
        "kmsKeyID": SCALAR,
        "snapshotID": SCALAR,
        "throughput": SCALAR,
        "volumeInitializationRate": SCALAR,
        "volumeSize": SCALAR,
        "volumeType": SCALAR,
    },
}
METADATA_OPTIONS = {
    "httpEndpoint": SCALAR,
    "httpProtocolIPv6": SCALAR,
    "httpPutResponseHopLimit": SCALAR,
    "httpTokens": SCALAR,
}
TERM = {
    "tags": FREE,
    "id": SCALAR,
    "name": SCALAR,
    "owner": SCALAR,
    "alias": SCALAR,
    "ssmParameter": SCALAR,
    "ownerID": SCALAR,
    "instanceMatchCriteria": SCALAR,
}
AWS_SETTINGS = {
    "amiFamily": SCALAR,
    "amiSelector": FREE,
    "subnetSelector": FREE,
    "securityGroupSelector": FREE,
    "instanceProfile": SCALAR,
    "launchTemplate": SCALAR,
    "tags": FREE,
    "userData": SCALAR,
    "blockDeviceMappings": lst(BLOCK_DEVICE),
    "metadataOptions": METADATA_OPTIONS,
    "detailedMonitoring": SCALAR,
    "context": SCALAR,
}
EC2_NODE_CLASS_SPEC = {
    "subnetSelectorTerms": lst(TERM),
    "securityGroupSelectorTerms": lst(TERM),
    "capacityReservationSelectorTerms": lst(TERM),
    "amiSelectorTerms": lst(TERM),
    "placementGroupSelector": {"name": SCALAR, "id": SCALAR},
    "associatePublicIPAddress": SCALAR,
    "ipPrefixCount": SCALAR,
    "amiFamily": SCALAR,
    "userData": SCALAR,
    "role": SCALAR,
    "instanceProfile": SCALAR,
    "tags": FREE,
    "kubelet": KUBELET,
    "blockDeviceMappings": lst(BLOCK_DEVICE),
    "instanceStorePolicy": SCALAR,
    "networkInterfaces": lst(
        {"networkCardIndex": SCALAR, "deviceIndex": SCALAR, "interfaceType": SCALAR}
    ),
    "detailedMonitoring": SCALAR,
    "metadataOptions": METADATA_OPTIONS,
    "connectionTracking": {
        "tcpEstablishedTimeout": SCALAR,
        "udpStreamTimeout": SCALAR,
        "udpTimeout": SCALAR,
    },
    "context": SCALAR,
    "cpuOptions": {"nestedVirtualization": SCALAR},
}
NODE_POOL_SPEC = {
    "template": {"metadata": {"labels": FREE, "annotations": FREE}, "spec": CLAIM_SPEC},
    "disruption": {
        "consolidationPolicy": SCALAR,
        "consolidateAfter": SCALAR,
        "expireAfter": SCALAR,
        "budgets": lst(
            {"nodes": SCALAR, "schedule": SCALAR, "duration": SCALAR, "reasons": lst(SCALAR)}
        ),
    },
    "limits": FREE,
    "weight": SCALAR,
    "replicas": SCALAR,
}
PROVISIONER_SPEC = {
    "annotations": FREE,
    "labels": FREE,
    "taints": lst(TAINT),
    "startupTaints": lst(TAINT),
    "requirements": lst(REQUIREMENT),
    "kubeletConfiguration": KUBELET,
    "provider": AWS_SETTINGS,
    "providerRef": NODE_CLASS_REF,
    "ttlSecondsAfterEmpty": SCALAR,
    "ttlSecondsUntilExpired": SCALAR,
    "consolidation": {"enabled": SCALAR},
    "limits": {"resources": FREE},
    "weight": SCALAR,
}
AKS_NODE_CLASS_SPEC = {
    "imageFamily": SCALAR,
    "imageVersion": SCALAR,
    "osDiskSizeGB": SCALAR,
    "vnetSubnetID": SCALAR,
    "maxPods": SCALAR,
    "tags": FREE,
    "kubelet": KUBELET,
}


def document(spec):
    return {"apiVersion": SCALAR, "kind": SCALAR, "metadata": META, "spec": spec}


SCHEMAS = {
    "NodePool": document(NODE_POOL_SPEC),
    "NodeClaim": document(CLAIM_SPEC | {"resources": {"requests": FREE}}),
    "EC2NodeClass": document(EC2_NODE_CLASS_SPEC),
    "Provisioner": document(PROVISIONER_SPEC),
    "AWSNodeTemplate": document(AWS_SETTINGS),
    "AKSNodeClass": document(AKS_NODE_CLASS_SPEC),
}

# --- Finding YAML in a walkthrough ----------------------------------------------------------

HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")
FENCE = re.compile(r"^\s*```")
TOP_KEY = re.compile(r"^(apiVersion|kind):\s*(\S+)")
# A YAML-looking line of a bare manifest: `key: ...`, `key:`, `- ...` or indented text.
YAML_LINE = re.compile(r"""^(\s+\S|-\s|-$|#|\.\.\.|---|["']?[\w./:@$-]+["']?:(\s|$))""")


@dataclass
class Region:
    """A run of YAML lines from a walkthrough; `first` is the 1-based line of lines[0]."""

    first: int
    lines: list[str]


def regions(text: str) -> list[Region]:
    """Heredoc bodies, fenced blocks and bare manifests, in the order they appear."""
    lines = text.splitlines()
    out: list[Region] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        heredoc = HEREDOC.search(line)
        if heredoc and not line.lstrip().startswith("#"):
            end = next(
                (j for j in range(i + 1, len(lines)) if lines[j].strip() == heredoc.group(2)),
                len(lines),
            )
            out.append(Region(i + 2, lines[i + 1 : end]))
            i = end + 1
        elif FENCE.match(line):
            end = next((j for j in range(i + 1, len(lines)) if FENCE.match(lines[j])), len(lines))
            out.append(Region(i + 2, lines[i + 1 : end]))
            i = end + 1
        elif line.startswith("apiVersion:"):
            end = bare_end(lines, i)
            out.append(Region(i + 1, lines[i:end]))
            i = end
        else:
            i += 1
    return out


def bare_end(lines: list[str], start: int) -> int:
    """End of a manifest pasted into prose: the first line that is not YAML. A blank line
    ends it unless indented YAML (a block scalar's next paragraph) follows."""
    j = start + 1
    while j < len(lines):
        line = lines[j]
        if not line.strip():
            k = j
            while k < len(lines) and not lines[k].strip():
                k += 1
            if k < len(lines) and lines[k].startswith((" ", "\t")) and YAML_LINE.match(lines[k]):
                j = k
                continue
            return j
        if not YAML_LINE.match(line):
            return j
        j += 1
    return j


@dataclass
class Doc:
    """One YAML document: its 1-based first line in the walkthrough and its lines."""

    first: int
    lines: list[str]

    def top(self, key: str) -> str | None:
        """The first flush-left `key:` value (apiVersion, kind): the document's own."""
        for line in self.lines:
            m = TOP_KEY.match(line)
            if m and m.group(1) == key:
                return m.group(2).strip("\"'")
        return None


def documents(region: Region) -> list[Doc]:
    """Splits a region at `---` lines; drops blank lines around each document."""
    docs: list[Doc] = []
    start = 0
    for n, line in enumerate(region.lines + ["---"]):
        if line.rstrip() == "---" or line.startswith("--- "):
            chunk = [l.rstrip() for l in region.lines[start:n]]
            offset = start
            while chunk and not chunk[0].strip():
                chunk.pop(0)
                offset += 1
            while chunk and not chunk[-1].strip():
                chunk.pop()
            if chunk:
                docs.append(Doc(region.first + offset, chunk))
            start = n + 1
    return docs


# --- Re-indenting a flattened document ------------------------------------------------------

KEY = re.compile(r"""^("[^"]*"|'[^']*'|[^\s#'"-][^#]*?|-[^\s#][^#]*?):(?:\s+(.*))?$""")


class ReindentError(Exception):
    pass


def is_flattened(lines: list[str]) -> bool:
    """True when no line is indented although some mapping opens a nested block."""
    content = [l for l in lines if l.strip() and not l.lstrip().startswith("#")]
    if any(l[0] in " \t" for l in content):
        return False
    for a, b in zip(content, content[1:]):
        m = KEY.match(a)
        if m and not strip_comment(m.group(2) or "") and not b.startswith("-"):
            return True
    return False


def strip_comment(value: str) -> str:
    """A scalar without its trailing ` # comment` (outside quotes)."""
    quote = None
    for n, ch in enumerate(value):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "#" and (n == 0 or value[n - 1] in " \t"):
            return value[:n].strip()
    return value.strip()


@dataclass
class Frame:
    schema: object  # dict, FREE, or ("list", item)
    indent: int

    def accepts(self, key: str) -> bool:
        return isinstance(self.schema, dict) and key.strip("\"'") in self.schema

    def child(self, key: str):
        return self.schema[key.strip("\"'")] if isinstance(self.schema, dict) else SCALAR


def reindent(lines: list[str], schema: dict, where: str) -> list[str]:
    """Restores the indentation of a flush-left document from the shape of its kind."""
    stack = [Frame(schema, 0)]
    out: list[str] = []
    for n, raw in enumerate(lines):
        line = raw.strip()
        if not line or line.startswith("#"):
            out.append(" " * stack[-1].indent + line if line else "")
            continue
        if line.startswith("- ") or line == "-":
            item = line[2:].strip()
            m = KEY.match(item)
            key = m.group(1) if m else None
            while stack and not fits_list(stack[-1], key):
                stack.pop()
            if not stack:
                raise ReindentError(f"{where}: list item {line!r} fits nowhere")
            frame = stack[-1]
            out.append(" " * frame.indent + line)
            item_schema = frame.schema[1]
            if key is not None:
                stack.append(Frame(item_schema, frame.indent + 2))
                open_child(stack, key, m.group(2))
            continue
        m = KEY.match(line)
        if not m:
            raise ReindentError(f"{where}: line {n + 1} {line!r} is neither a key nor an item")
        key = m.group(1)
        target = next((k for k in range(len(stack) - 1, -1, -1) if stack[k].accepts(key)), None)
        if target is None:
            if stack[-1].schema == FREE:
                target = len(stack) - 1
            else:
                raise ReindentError(f"{where}: line {n + 1}: no place for key {key!r}")
        del stack[target + 1 :]
        out.append(" " * stack[-1].indent + line)
        open_child(stack, key, m.group(2))
    return out


def fits_list(frame: Frame, key: str | None) -> bool:
    """Whether a `- ...` item (a mapping starting with `key`, or a scalar) belongs in frame."""
    if not (isinstance(frame.schema, tuple) and frame.schema[0] == "list"):
        return False
    item = frame.schema[1]
    if key is None:
        return item == SCALAR
    return isinstance(item, dict) and key.strip("\"'") in item or item == FREE


def open_child(stack: list[Frame], key: str, value: str | None) -> None:
    """After `key:` with no value, pushes the block it opens."""
    if strip_comment(value or ""):
        return
    frame = stack[-1]
    child = frame.child(key)
    if child == SCALAR:
        return
    stack.append(Frame(child, frame.indent + 2))


# --- Writing fixtures -----------------------------------------------------------------------


def seed_id(path: Path) -> str:
    """`000_eb50c0e70f5c72ee.txt` → `seed000`."""
    return "seed" + path.stem.split("_", 1)[0]


def extract(seed: Path) -> list[tuple[str, str]]:
    """(file name, text) of every wanted document of one walkthrough."""
    text = seed.read_text(encoding="utf-8")
    found = [d for r in regions(text) for d in documents(r) if d.top("kind") in KINDS]
    out = []
    for n, doc in enumerate(found):
        kind = doc.top("kind") or ""
        api_version = doc.top("apiVersion") or "?"
        body = doc.lines
        header = [
            f"# {api_version} {kind} from ../shared/seeds/{seed.name}, line {doc.first}",
            f"# (manifest {n + 1} of {len(found)} there). Generated by `{COMMAND}`",
            "# (`make fixtures`): do not edit by hand.",
        ]
        if is_flattened(body):
            body = reindent(body, SCHEMAS[kind], f"{seed.name}:{doc.first}")
            header.append(
                "# The walkthrough lost this manifest's indentation; the script restored it."
            )
        name = f"{seed_id(seed)}_{n:02d}_{kind.lower()}.yaml"
        out.append((name, "\n".join(header + body) + "\n"))
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=Path, default=DEFAULT_SEEDS, help="walkthrough directory")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="fixture directory")
    args = parser.parse_args(argv)
    seeds = sorted(args.seeds.glob("*.txt"))
    if not seeds:
        print(f"no walkthroughs (*.txt) in {args.seeds}", file=sys.stderr)
        return 1
    files: dict[str, str] = {}
    try:
        for seed in seeds:
            files.update(extract(seed))
    except ReindentError as e:
        print(f"cannot re-indent {e}", file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    for stale in args.out.glob("seed*.yaml"):
        if stale.name not in files:
            stale.unlink()
    for name, text in sorted(files.items()):
        (args.out / name).write_text(text, encoding="utf-8")
    print(f"wrote {len(files)} manifests from {len(seeds)} walkthroughs to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
