#!/usr/bin/env bash
# cluster/check.sh NAME RUNDIR BINDIR ROOT — run by `scripts/cluster.sh check [NAME]`.
#
# End-to-end check of a running control plane: /readyz and version; a KWOK node
# turns Ready; a 3-replica Deployment is scheduled by kube-scheduler and run by
# KWOK (pods Running with IPs); the disruption controller computes a PDB's
# status; deleting the Deployment garbage-collects its ReplicaSet and pods;
# Kerf's CRDs (infra/crds/) and the NodePool/EC2NodeClass manifests under
# examples/ are accepted by the real API server. Exits non-zero on any failure.
set -euo pipefail

NAME=$1 RUN=$2 BIN=$3 ROOT=$4
NS=kerf-check
NODE=kerf-check-kwok-0
FAILED=()
WAIT=${KERF_CHECK_WAIT:-90s}

say() { printf '[check] %s\n' "$*"; }
ok() { printf '[check] ok: %s\n' "$*"; }
bad() {
    printf '[check] FAIL: %s\n' "$1" >&2
    [[ -z ${2:-} ]] || printf '%s\n' "$2" | sed 's/^/    /' >&2
    FAILED+=("$1")
}

KUBECTL=${KUBECTL:-}
if [[ -z $KUBECTL ]]; then
    for k in "$BIN/kubectl" "$ROOT/.venv/bin/kubectl" "$(command -v kubectl || true)"; do
        [[ -n $k && -x $k ]] && { KUBECTL=$k; break; }
    done
fi
[[ -n $KUBECTL ]] || { echo "[check] FAIL: no kubectl (set KUBECTL, or run scripts/cluster.sh build)" >&2; exit 1; }
export KUBECONFIG=$RUN/kubeconfig
k() { "$KUBECTL" "$@"; }
say "control plane $NAME, kubectl $KUBECTL"

# 1. API server health and version.
if out=$(k get --raw /readyz 2>&1) && [[ $out == ok ]]; then ok "/readyz"; else bad "/readyz" "$out"; fi
if out=$(k version 2>&1); then ok "kubectl version"; printf '%s\n' "$out" | sed 's/^/    /'; else bad "kubectl version" "$out"; fi

# Clean leftovers of an earlier run.
k delete namespace "$NS" --ignore-not-found --wait=true --timeout=60s >/dev/null 2>&1 || true
k delete node "$NODE" --ignore-not-found >/dev/null 2>&1 || true

# 2. A KWOK node turns Ready.
if out=$(k apply -f - 2>&1 <<EOF
apiVersion: v1
kind: Node
metadata:
  name: $NODE
  labels:
    kerf.dev/kubelet: kwok
    type: kwok
    kubernetes.io/hostname: $NODE
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
spec:
  taints:
  - key: kwok.x-k8s.io/node
    value: fake
    effect: NoSchedule
status:
  capacity: {cpu: "32", memory: 256Gi, pods: "110"}
  allocatable: {cpu: "32", memory: 256Gi, pods: "110"}
EOF
); then ok "node $NODE created"; else bad "create node $NODE" "$out"; fi
if out=$(k wait --for=condition=Ready "node/$NODE" --timeout="$WAIT" 2>&1); then
    ok "node $NODE Ready (KWOK)"
else
    bad "node $NODE did not turn Ready" "$out"$'\n'"$(k get node "$NODE" -o yaml 2>&1 | tail -40)"
fi
if out=$(k -n kube-node-lease get lease "$NODE" -o jsonpath='{.spec.holderIdentity} {.spec.renewTime}' 2>&1) && [[ $out == ?*" "?* ]]; then
    ok "node lease kube-node-lease/$NODE held by KWOK (holder, renewTime: $out)"
else
    bad "no node lease for $NODE" "$out"
fi

# 3. A Deployment of 3 replicas: scheduled by kube-scheduler, run by KWOK.
k create namespace "$NS" >/dev/null
if out=$(k -n "$NS" apply -f - 2>&1 <<EOF
apiVersion: apps/v1
kind: Deployment
metadata:
  name: inflate
spec:
  replicas: 3
  selector:
    matchLabels: {app: inflate}
  template:
    metadata:
      labels: {app: inflate}
    spec:
      nodeSelector: {type: kwok}
      tolerations:
      - {key: kwok.x-k8s.io/node, operator: Exists, effect: NoSchedule}
      containers:
      - name: inflate
        image: registry.k8s.io/pause:3.10
        resources:
          requests: {cpu: "1", memory: 1Gi}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: inflate
spec:
  minAvailable: 2
  selector:
    matchLabels: {app: inflate}
EOF
); then ok "deployment and PDB created"; else bad "create deployment/PDB" "$out"; fi
if out=$(k -n "$NS" rollout status deployment/inflate --timeout="$WAIT" 2>&1); then
    ok "deployment rolled out"
else
    bad "deployment did not roll out" "$out"$'\n'"$(k -n "$NS" get pods -o wide 2>&1)"
fi
pods=$(k -n "$NS" get pods -l app=inflate -o jsonpath='{range .items[*]}{.metadata.name} {.status.phase} {.spec.nodeName} {.status.podIP}{"\n"}{end}' 2>&1 || true)
running=$(awk -v n="$NODE" '$2 == "Running" && $3 == n && $4 != "" {c++} END {print c+0}' <<<"$pods")
if [[ $running == 3 ]]; then
    ok "3 pods Running on $NODE with IPs"
    printf '%s\n' "$pods" | sed 's/^/    /'
else
    bad "expected 3 pods Running on $NODE with IPs, got $running" "$pods"
fi

# 4. PDB status computed by the disruption controller.
if out=$(k -n "$NS" wait --for=jsonpath='{.status.disruptionsAllowed}'=1 pdb/inflate --timeout="$WAIT" 2>&1); then
    ok "PDB disruptionsAllowed=1 (currentHealthy=$(k -n "$NS" get pdb inflate -o jsonpath='{.status.currentHealthy}'))"
else
    bad "PDB status not computed" "$out"$'\n'"$(k -n "$NS" get pdb inflate -o yaml 2>&1 | sed -n '/^status:/,$p')"
fi

# 5. Deleting the Deployment garbage-collects its ReplicaSet and pods.
k -n "$NS" delete deployment inflate --wait=true --timeout="$WAIT" >/dev/null 2>&1 || true
deadline=$((SECONDS + ${WAIT%s}))
while :; do
    left=$(k -n "$NS" get replicasets,pods -l app=inflate -o name 2>&1 || true)
    [[ -z $left ]] && break
    ((SECONDS < deadline)) || break
    sleep 1
done
if [[ -z $left ]]; then ok "deployment deleted: ReplicaSet and pods garbage-collected"; else bad "left after deleting the deployment" "$left"; fi

# 6. Kerf's CRDs.
if out=$(k apply -f "$ROOT/infra/crds/" 2>&1); then
    ok "kubectl apply -f infra/crds/"
    printf '%s\n' "$out" | sed 's/^/    /'
else
    bad "kubectl apply -f infra/crds/" "$out"
fi
if out=$(k wait --for=condition=Established --timeout=60s \
    crd/nodepools.karpenter.sh crd/nodeclaims.karpenter.sh crd/ec2nodeclasses.karpenter.k8s.aws 2>&1); then
    ok "CRDs Established"
else
    bad "CRDs not Established" "$out"
fi

# 7. The example NodePool / EC2NodeClass manifests. Plain manifest files are
# applied as they are; the scenario files embed manifests in YAML strings,
# which are extracted (with python3 + PyYAML when present). Each source file is
# applied on its own, then its objects are deleted again.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mapfile -t files < <(cd "$ROOT" && grep -rlE '^\s*kind:\s*(NodePool|EC2NodeClass)\b' examples | sort)
if command -v python3 >/dev/null && python3 -c 'import yaml' 2>/dev/null; then
    python3 - "$ROOT" "$tmp" "${files[@]}" <<'PY'
import os, sys, yaml
root, out, files = sys.argv[1], sys.argv[2], sys.argv[3:]
KINDS = {"NodePool", "EC2NodeClass", "NodeClaim"}
def manifests(text):
    try:
        docs = list(yaml.safe_load_all(text))
    except yaml.YAMLError:
        return []
    return [d for d in docs if isinstance(d, dict) and d.get("kind") in KINDS and "apiVersion" in d]
def walk(node, found):
    if isinstance(node, dict):
        for v in node.values(): walk(v, found)
    elif isinstance(node, list):
        for v in node: walk(v, found)
    elif isinstance(node, str) and "kind:" in node:
        found.extend(manifests(node))
for i, f in enumerate(files):
    text = open(os.path.join(root, f)).read()
    found = manifests(text)
    if not found:
        try:
            for d in yaml.safe_load_all(text): walk(d, found)
        except yaml.YAMLError as e:
            print(f"[check] cannot parse {f}: {e}", file=sys.stderr)
    if found:
        name = f"{i:03d}-" + f.replace("/", "_")
        with open(os.path.join(out, name), "w") as o:
            o.write(f"# from {f}\n")
            yaml.safe_dump_all(found, o, sort_keys=False)
PY
else
    say "python3 with PyYAML not found: only plain manifest files under examples/ are checked"
    for i in "${!files[@]}"; do
        grep -qE '^kind:\s*(NodePool|EC2NodeClass)\b' "$ROOT/${files[$i]}" &&
            cp "$ROOT/${files[$i]}" "$tmp/$(printf '%03d' "$i")-${files[$i]//\//_}"
    done
fi
napplied=0
for m in "$tmp"/*; do
    [[ -f $m ]] || continue
    src=$(sed -n '1s/^# from //p' "$m")
    [[ -n $src ]] || src=${m##*/}
    if out=$(k apply -f "$m" 2>&1); then
        napplied=$((napplied + 1))
        ok "apply $src: $(printf '%s' "$out" | tr '\n' ';' | sed 's/;$//; s/;/; /g')"
    else
        bad "apply $src rejected" "$out"
    fi
    k delete nodepools.karpenter.sh,ec2nodeclasses.karpenter.k8s.aws,nodeclaims.karpenter.sh --all --wait=false >/dev/null 2>&1 || true
done
((napplied > 0)) || [[ ${#FAILED[@]} -gt 0 ]] || bad "no example NodePool/EC2NodeClass manifests found under examples/"

# Clean up.
k delete namespace "$NS" --wait=false >/dev/null 2>&1 || true
k delete node "$NODE" --ignore-not-found >/dev/null 2>&1 || true

if ((${#FAILED[@]})); then
    printf '[check] %d check(s) FAILED:\n' "${#FAILED[@]}" >&2
    printf '    - %s\n' "${FAILED[@]}" >&2
    exit 1
fi
say "all checks passed"
