#!/usr/bin/env bash
# scripts/cluster.sh — a real, local Kubernetes control plane for Kerf's tests.
#
# Builds etcd, kube-apiserver, kube-controller-manager, kube-scheduler, KWOK
# (fake kubelets) and a matching kubectl from the Go module proxy, using the
# go.mod files under cluster/ (see cluster/README.md for the pinned versions),
# and runs them as plain processes bound to 127.0.0.1 on free ports chosen at
# start, so several control planes can run side by side.
#
#   scripts/cluster.sh build                   build the binaries into target/cluster/bin/
#   scripts/cluster.sh up [NAME]               start control plane NAME (default kerf), wait until ready
#   scripts/cluster.sh down [NAME|--all] [--keep-logs]
#                                              stop it (SIGTERM, then SIGKILL) and remove its run dir
#   scripts/cluster.sh env [NAME]              print `export KUBECONFIG=...` (use with eval)
#   scripts/cluster.sh status [NAME|--all]     show its processes, ports and /readyz
#   scripts/cluster.sh user NAME USER [GROUP...]
#                                              mint target/cluster/run/NAME/USER.kubeconfig
#                                              (client cert CN=USER, O=GROUP..., signed by the cluster CA)
#   scripts/cluster.sh check [NAME]            end-to-end check of a running control plane
#
# State lives in target/cluster/run/NAME/ (certs, etcd data, kubeconfigs, pids,
# logs/<binary>.log); the admin kubeconfig (system:masters) is
# target/cluster/run/NAME/kubeconfig.
#
# Environment: KERF_CLUSTER_API_ONLY=1 (`up` starts etcd and kube-apiserver alone: no
# controllers, scheduler or KWOK act on what a client writes, as with envtest),
# KERF_CLUSTER_KWOK_SELECTOR (the label selector of the Nodes KWOK plays the kubelet
# for; default kerf.dev/kubelet=kwok, the label Kerf's kubelet bridge puts on its Nodes;
# kwok.x-k8s.io/node=fake for the Nodes Karpenter's KWOK provider creates),
# KERF_CLUSTER_TIMEOUT (seconds to wait for readiness, default 180),
# KUBECTL (kubectl for `check`; default target/cluster/bin/kubectl, then
# .venv/bin/kubectl, then kubectl on PATH).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC="$ROOT/cluster"
OUT="$ROOT/target/cluster"
BIN="$OUT/bin"
RUNS="$OUT/run"
COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok)
TIMEOUT="${KERF_CLUSTER_TIMEOUT:-180}"
SERVICE_CIDR=10.96.0.0/16
SERVICE_IP=10.96.0.1
POD_CIDR=10.244.0.0/16
KWOK_LABEL="${KERF_CLUSTER_KWOK_SELECTOR:-kerf.dev/kubelet=kwok}"

log() { printf '[cluster] %s\n' "$*" >&2; }
die() { printf '[cluster] error: %s\n' "$*" >&2; exit 1; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

need_tools() {
    local missing=()
    command -v openssl >/dev/null || missing+=(openssl)
    command -v curl >/dev/null || missing+=(curl)
    if ((${#missing[@]})); then
        log "installing ${missing[*]} (apt-get)"
        apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null \
            || die "cannot install ${missing[*]}"
    fi
}

# ---------------------------------------------------------------------------
# build
# ---------------------------------------------------------------------------

cmd_build() {
    command -v go >/dev/null || die "go is not installed"
    export GOTOOLCHAIN=local GOFLAGS="${GOFLAGS:+$GOFLAGS }-buildvcs=false"
    mkdir -p "$BIN"
    local t0; t0=$(now)

    local kver kdate ld p
    kver=$(cd "$SRC/kubernetes" && go list -m -f '{{.Version}}' k8s.io/kubernetes)
    kdate=$(cd "$SRC/kubernetes" && go list -m -f '{{if .Time}}{{.Time.UTC.Format "2006-01-02T15:04:05Z"}}{{end}}' k8s.io/kubernetes)
    [[ $kver =~ ^v([0-9]+)\.([0-9]+)\.[0-9]+ ]] || die "unexpected k8s.io/kubernetes version $kver"
    ld="-s -w"
    for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
        ld+=" -X $p.gitVersion=$kver -X $p.gitMajor=${BASH_REMATCH[1]} -X $p.gitMinor=${BASH_REMATCH[2]}"
        ld+=" -X $p.gitTreeState=clean -X $p.buildDate=${kdate:-1970-01-01T00:00:00Z}"
    done

    log "building etcd"
    (cd "$SRC/etcd" && nice -n 10 go build -ldflags "-s -w" -o "$BIN/etcd" go.etcd.io/etcd/server/v3)
    log "building kwok"
    (cd "$SRC/kwok" && nice -n 10 go build -ldflags "-s -w" -o "$BIN/kwok" sigs.k8s.io/kwok/cmd/kwok)
    log "building kube-apiserver, kube-controller-manager, kube-scheduler, kubectl ($kver)"
    (cd "$SRC/kubernetes" && nice -n 10 go build -ldflags "$ld" -o "$BIN/" \
        k8s.io/kubernetes/cmd/kube-apiserver \
        k8s.io/kubernetes/cmd/kube-controller-manager \
        k8s.io/kubernetes/cmd/kube-scheduler \
        k8s.io/kubernetes/cmd/kubectl)

    # KWOK has no stages built in: ship the ones kwokctl uses by default
    # (node-initialize, node-heartbeat-with-lease, pod-ready/complete/delete)
    # from the kwok module itself, so they always match the binary.
    local kdir stages=()
    (cd "$SRC/kwok" && go mod download sigs.k8s.io/kwok)
    kdir=$(cd "$SRC/kwok" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)
    [[ -d $kdir/kustomize/stage ]] || die "sigs.k8s.io/kwok is not in the module cache (go list gave '$kdir')"
    stages=(node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml
        pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml)
    {
        echo "# Generated by scripts/cluster.sh build from $(basename "$kdir")/kustomize/stage"
        for p in "${stages[@]}"; do echo "---"; cat "$kdir/kustomize/stage/$p"; done
    } >"$BIN/kwok-stages.yaml.tmp"
    mv "$BIN/kwok-stages.yaml.tmp" "$BIN/kwok-stages.yaml"
    log "built in $(elapsed "$t0")s: $(cd "$BIN" && echo etcd kube-apiserver kube-controller-manager kube-scheduler kwok kubectl)"
}

binaries_present() {
    local b
    for b in "${COMPONENTS[@]}" kwok-stages.yaml; do [[ -e $BIN/$b ]] || return 1; done
}

# ---------------------------------------------------------------------------
# certificates and kubeconfigs
# ---------------------------------------------------------------------------

# new_key FILE: an ECDSA P-256 private key.
new_key() { openssl ecparam -name prime256v1 -genkey -noout -out "$1" 2>/dev/null; chmod 600 "$1"; }

# sign_cert DIR NAME SUBJECT EXTENSIONS: DIR/NAME.key + DIR/NAME.crt signed by
# the cluster CA ($RUN/pki/ca.*, or $RUN/pki/$CA_NAME.*).
sign_cert() {
    local pki=$1 name=$2 subj=$3 ext=$4 ca=$RUN/pki/${CA_NAME:-ca}
    new_key "$pki/$name.key"
    printf '%b\n' "$ext" >"$pki/$name.ext"
    if ! { openssl req -new -key "$pki/$name.key" -subj "$subj" -out "$pki/$name.csr" &&
        openssl x509 -req -in "$pki/$name.csr" -CA "$ca.crt" -CAkey "$ca.key" \
            -set_serial "0x$(openssl rand -hex 16)" -days 3650 -sha256 \
            -extfile "$pki/$name.ext" -out "$pki/$name.crt"; } 2>"$pki/$name.err"; then
        cat "$pki/$name.err" >&2
        die "openssl failed to issue the $name certificate ($subj)"
    fi
    rm -f "$pki/$name.csr" "$pki/$name.ext" "$pki/$name.err"
}

# client_cert DIR NAME CN [GROUP...]
client_cert() {
    local pki=$1 name=$2 cn=$3 subj g
    shift 3
    subj="/CN=$(subj_escape "$cn")"
    for g in "$@"; do subj+="/O=$(subj_escape "$g")"; done
    sign_cert "$pki" "$name" "$subj" \
        'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth'
}
subj_escape() { printf '%s' "$1" | sed 's|[/+=,\\]|\\&|g'; }

gen_pki() {
    local pki=$1
    mkdir -p "$pki"
    new_key "$pki/ca.key"
    openssl req -x509 -new -key "$pki/ca.key" -subj "/CN=kerf-$NAME-ca" -days 3650 -sha256 \
        -addext "basicConstraints=critical,CA:TRUE" \
        -addext "keyUsage=critical,digitalSignature,keyEncipherment,keyCertSign,cRLSign" \
        -out "$pki/ca.crt" 2>/dev/null
    sign_cert "$pki" etcd-server "/CN=etcd" \
        'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1'
    sign_cert "$pki" apiserver "/CN=kube-apiserver" \
        "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,IP:127.0.0.1,IP:$SERVICE_IP"
    client_cert "$pki" apiserver-etcd-client kube-apiserver-etcd-client
    client_cert "$pki" apiserver-kubelet-client kube-apiserver-kubelet-client system:masters
    client_cert "$pki" admin kubernetes-admin system:masters
    client_cert "$pki" controller-manager system:kube-controller-manager
    client_cert "$pki" scheduler system:kube-scheduler
    client_cert "$pki" kwok kwok-controller system:masters
    # Front-proxy (request header) CA and the API server's client cert for
    # it: the controllers' delegated authentication reads this CA from
    # kube-system/extension-apiserver-authentication.
    new_key "$pki/front-proxy-ca.key"
    openssl req -x509 -new -key "$pki/front-proxy-ca.key" -subj "/CN=kerf-$NAME-front-proxy-ca" -days 3650 -sha256 \
        -addext "basicConstraints=critical,CA:TRUE" \
        -addext "keyUsage=critical,digitalSignature,keyEncipherment,keyCertSign,cRLSign" \
        -out "$pki/front-proxy-ca.crt" 2>/dev/null
    CA_NAME=front-proxy-ca client_cert "$pki" front-proxy-client front-proxy-client
    new_key "$pki/sa.key"
    openssl ec -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
}

b64() { base64 -w0 <"$1"; }
yaml_quote() { printf '"%s"' "$(printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g')"; }

# write_kubeconfig FILE USER CERT KEY
write_kubeconfig() {
    local file=$1 user=$2 crt=$3 key=$4 uq
    uq=$(yaml_quote "$user")
    cat >"$file.tmp" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: $NAME
  cluster:
    server: https://127.0.0.1:$API_PORT
    certificate-authority-data: $(b64 "$RUN/pki/ca.crt")
users:
- name: $uq
  user:
    client-certificate-data: $(b64 "$crt")
    client-key-data: $(b64 "$key")
contexts:
- name: $NAME
  context:
    cluster: $NAME
    user: $uq
current-context: $NAME
EOF
    chmod 600 "$file.tmp"
    mv "$file.tmp" "$file"
}

# ---------------------------------------------------------------------------
# processes
# ---------------------------------------------------------------------------

# Ports: chosen at start below the kernel's ephemeral range (so outgoing
# connections cannot take them), skipping ports in use and ports recorded by
# other control planes of ours.
PORT=
TAKEN=" "
pick_port() {
    local lo hi i p
    read -r lo _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || lo=32768
    hi=$((lo - 1))
    ((hi > 20000)) || hi=60999
    if [[ -z ${TAKEN_LOADED:-} ]]; then
        TAKEN+="$(cat "$RUNS"/*/ports.env 2>/dev/null | sed -n 's/^[A-Z_]*=\([0-9]*\)$/\1/p' | tr '\n' ' ' || true)"
        TAKEN_LOADED=1
    fi
    for ((i = 0; i < 500; i++)); do
        p=$((20000 + (RANDOM * 32768 + RANDOM) % (hi - 20000)))
        [[ $TAKEN == *" $p "* ]] && continue
        port_in_use "$p" && continue
        TAKEN+="$p "
        PORT=$p
        return 0
    done
    die "no free port found"
}
port_in_use() {
    if command -v ss >/dev/null; then
        [[ -n $(ss -Htan "( sport = :$1 )" 2>/dev/null) ]]
    else
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
    fi
}

# start NAME ARGS...: runs $BIN/NAME in its own session, logs to logs/NAME.log.
# Returns once the child has exec'd the binary (before that, /proc/PID/exe is
# bash or setsid and is_ours says no, which wait_for would take for an exit),
# or has exited (wait_for then reports it), or after 10 s.
start() {
    local name=$1 pid i
    shift
    setsid "$BIN/$name" "$@" >"$RUN/logs/$name.log" 2>&1 </dev/null &
    pid=$!
    echo "$pid" >"$RUN/pids/$name.pid"
    for ((i = 0; i < 500; i++)); do
        is_ours "$pid" "$RUN" && return 0
        [[ -d /proc/$pid ]] || return 0
        [[ $(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1) == Z ]] && return 0
        sleep 0.02
    done
}

# our_pid RUNDIR NAME: prints the pid of NAME of that control plane when it is
# alive and really ours (binary under $BIN and run dir in its command line).
our_pid() {
    local run=$1 name=$2 pid
    [[ -f $run/pids/$name.pid ]] || return 1
    pid=$(<"$run/pids/$name.pid")
    is_ours "$pid" "$run" || return 1
    echo "$pid"
}
is_ours() {
    local pid=$1 run=$2 exe
    [[ $pid =~ ^[0-9]+$ && -d /proc/$pid ]] || return 1
    exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || return 1
    exe=${exe% (deleted)}
    [[ $exe == "$BIN"/* ]] || return 1
    tr '\0' '\n' 2>/dev/null <"/proc/$pid/cmdline" | grep -qF "$run/"
}

# stray_pids RUNDIR: processes of our binaries whose command line names RUNDIR
# (covers lost pid files).
stray_pids() {
    local run=$1 d
    for d in /proc/[0-9]*; do
        is_ours "${d#/proc/}" "$run" && echo "${d#/proc/}"
    done
    return 0
}

# term_wait RUNDIR PID...: SIGTERM, wait up to 10 s, then SIGKILL.
term_wait() {
    local run=$1 pid i alive
    shift
    (($#)) || return 0
    for pid in "$@"; do kill -TERM "$pid" 2>/dev/null || true; done
    for ((i = 0; i < 100; i++)); do
        alive=0
        for pid in "$@"; do is_ours "$pid" "$run" && alive=1; done
        ((alive)) || break
        sleep 0.1
    done
    for pid in "$@"; do
        if is_ours "$pid" "$run"; then
            log "pid $pid ($(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | cut -c1-60)) did not stop on SIGTERM; SIGKILL"
            kill -KILL "$pid" 2>/dev/null || true
        fi
    done
    STOPPED+=("$@")
}

# wait_reaped: waits (at most 5 s) until init has reaped the STOPPED pids, so
# no <defunct> entry is left behind.
wait_reaped() {
    local i pid alive
    for ((i = 0; i < 50; i++)); do
        alive=0
        for pid in "${STOPPED[@]}"; do [[ -d /proc/$pid ]] && alive=1; done
        ((alive)) || break
        sleep 0.1
    done
    STOPPED=()
}
STOPPED=()

# stop_run RUNDIR KEEP_LOGS: controllers first, then the API server, then etcd
# (an API server whose etcd is gone can hang in its graceful shutdown).
stop_run() {
    local run=$1 keep_logs=$2 name pid group
    for group in "kwok kube-scheduler kube-controller-manager" kube-apiserver etcd; do
        local pids=()
        for name in $group; do
            pid=$(our_pid "$run" "$name") && pids+=("$pid")
        done
        term_wait "$run" "${pids[@]}"
    done
    local strays=()
    mapfile -t strays < <(stray_pids "$run")
    term_wait "$run" "${strays[@]}"
    wait_reaped
    if [[ $keep_logs == 1 ]]; then
        find "$run" -mindepth 1 -maxdepth 1 ! -name logs -exec rm -rf {} +
    else
        rm -rf "$run"
    fi
}

running_components() {
    local n c=0
    for n in "${COMPONENTS[@]}"; do our_pid "$RUN" "$n" >/dev/null && c=$((c + 1)); done
    echo "$c"
}

fail_start() {
    local who=$1 why=$2
    printf '[cluster] error: %s %s\n' "$who" "$why" >&2
    if [[ -f $RUN/logs/$who.log ]]; then
        printf '[cluster] last lines of %s:\n' "$RUN/logs/$who.log" >&2
        tail -n 25 "$RUN/logs/$who.log" | sed 's/^/    /' >&2
    fi
    log "stopping control plane $NAME (logs kept in $RUN/logs)"
    stop_run "$RUN" 1
    exit 1
}

# wait_for WHAT COMPONENT CMD...: polls CMD until it succeeds; fails if any
# started component died or the deadline passed.
wait_for() {
    local what=$1 who=$2 n
    shift 2
    while ! "$@" >/dev/null 2>&1; do
        for n in "${COMPONENTS[@]}"; do
            [[ -f $RUN/pids/$n.pid ]] || continue
            our_pid "$RUN" "$n" >/dev/null || fail_start "$n" "exited during start-up (waiting for $what)"
        done
        (($(date +%s) < DEADLINE)) || fail_start "$who" "not ready after ${TIMEOUT}s (waiting for $what)"
        sleep 0.2
    done
}

api() { curl -sf --max-time 5 --cacert "$RUN/pki/ca.crt" --cert "$RUN/pki/admin.crt" --key "$RUN/pki/admin.key" "https://127.0.0.1:$API_PORT$1"; }
etcd_health() {
    curl -sf --max-time 5 --cacert "$RUN/pki/ca.crt" --cert "$RUN/pki/apiserver-etcd-client.crt" \
        --key "$RUN/pki/apiserver-etcd-client.key" "https://127.0.0.1:$ETCD_PORT/health" | grep -q '"health":"true"'
}
healthz() { curl -sfk --max-time 5 "https://127.0.0.1:$1/healthz" | grep -q '^ok$'; }

# ---------------------------------------------------------------------------
# commands
# ---------------------------------------------------------------------------

set_name() {
    NAME=${1:-kerf}
    [[ $NAME =~ ^[a-z0-9][a-z0-9-]{0,39}$ ]] || die "bad control plane name '$NAME' (lowercase letters, digits, -)"
    RUN="$RUNS/$NAME"
}

load_ports() {
    [[ -f $RUN/ports.env ]] || die "control plane $NAME is not running (no $RUN/ports.env); run: scripts/cluster.sh up $NAME"
    # shellcheck disable=SC1091
    source "$RUN/ports.env"
}

cmd_up() {
    set_name "${1:-}"
    need_tools
    binaries_present || cmd_build
    if [[ -d $RUN ]]; then
        if (($(running_components) > 0)); then
            die "control plane $NAME is already running (scripts/cluster.sh down $NAME first)"
        fi
        rm -rf "$RUN"
    fi
    local t0
    t0=$(now)
    DEADLINE=$(($(date +%s) + TIMEOUT))
    mkdir -p "$RUN/logs" "$RUN/pids" "$RUN/kwok"
    log "starting control plane $NAME in $RUN"

    gen_pki "$RUN/pki"

    # Control planes starting at once pick their ports one after the other: each sees the
    # ports.env of those before it.
    exec 9>"$RUNS/.ports.lock"
    flock 9
    pick_port; ETCD_PORT=$PORT
    pick_port; ETCD_PEER_PORT=$PORT
    pick_port; API_PORT=$PORT
    pick_port; KCM_PORT=$PORT
    pick_port; SCHED_PORT=$PORT
    printf 'ETCD_PORT=%s\nETCD_PEER_PORT=%s\nAPI_PORT=%s\nKCM_PORT=%s\nSCHED_PORT=%s\n' \
        "$ETCD_PORT" "$ETCD_PEER_PORT" "$API_PORT" "$KCM_PORT" "$SCHED_PORT" >"$RUN/ports.env"
    exec 9>&-

    local pki=$RUN/pki
    write_kubeconfig "$RUN/kubeconfig" kubernetes-admin "$pki/admin.crt" "$pki/admin.key"
    write_kubeconfig "$RUN/controller-manager.kubeconfig" system:kube-controller-manager "$pki/controller-manager.crt" "$pki/controller-manager.key"
    write_kubeconfig "$RUN/scheduler.kubeconfig" system:kube-scheduler "$pki/scheduler.crt" "$pki/scheduler.key"
    write_kubeconfig "$RUN/kwok.kubeconfig" kwok-controller "$pki/kwok.crt" "$pki/kwok.key"

    start etcd \
        --name "$NAME" \
        --data-dir "$RUN/etcd" \
        --listen-client-urls "https://127.0.0.1:$ETCD_PORT" \
        --advertise-client-urls "https://127.0.0.1:$ETCD_PORT" \
        --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
        --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
        --initial-cluster "$NAME=http://127.0.0.1:$ETCD_PEER_PORT" \
        --initial-cluster-state new \
        --cert-file "$pki/etcd-server.crt" --key-file "$pki/etcd-server.key" \
        --trusted-ca-file "$pki/ca.crt" --client-cert-auth \
        --quota-backend-bytes 8589934592 \
        --unsafe-no-fsync
    wait_for "etcd /health" etcd etcd_health

    start kube-apiserver \
        --bind-address 127.0.0.1 \
        --advertise-address 127.0.0.1 \
        --secure-port "$API_PORT" \
        --etcd-servers "https://127.0.0.1:$ETCD_PORT" \
        --etcd-cafile "$pki/ca.crt" \
        --etcd-certfile "$pki/apiserver-etcd-client.crt" \
        --etcd-keyfile "$pki/apiserver-etcd-client.key" \
        --tls-cert-file "$pki/apiserver.crt" \
        --tls-private-key-file "$pki/apiserver.key" \
        --client-ca-file "$pki/ca.crt" \
        --kubelet-client-certificate "$pki/apiserver-kubelet-client.crt" \
        --kubelet-client-key "$pki/apiserver-kubelet-client.key" \
        --requestheader-client-ca-file "$pki/front-proxy-ca.crt" \
        --requestheader-allowed-names front-proxy-client \
        --requestheader-username-headers X-Remote-User \
        --requestheader-group-headers X-Remote-Group \
        --requestheader-extra-headers-prefix X-Remote-Extra- \
        --proxy-client-cert-file "$pki/front-proxy-client.crt" \
        --proxy-client-key-file "$pki/front-proxy-client.key" \
        --endpoint-reconciler-type none \
        --authorization-mode Node,RBAC \
        --enable-admission-plugins NodeRestriction \
        --allow-privileged=true \
        --service-cluster-ip-range "$SERVICE_CIDR" \
        --service-account-issuer https://kubernetes.default.svc.cluster.local \
        --service-account-key-file "$pki/sa.pub" \
        --service-account-signing-key-file "$pki/sa.key" \
        --cert-dir "$RUN/apiserver-certs"
    wait_for "kube-apiserver /readyz" kube-apiserver api /readyz
    if [[ ${KERF_CLUSTER_API_ONLY:-} == 1 ]]; then
        wait_for "namespace default" kube-apiserver api /api/v1/namespaces/default
        up_done "$t0" "(etcd and kube-apiserver only)"
        return 0
    fi

    start kube-controller-manager \
        --kubeconfig "$RUN/controller-manager.kubeconfig" \
        --authentication-kubeconfig "$RUN/controller-manager.kubeconfig" \
        --authorization-kubeconfig "$RUN/controller-manager.kubeconfig" \
        --client-ca-file "$pki/ca.crt" \
        --bind-address 127.0.0.1 \
        --secure-port "$KCM_PORT" \
        --cert-dir "$RUN/controller-manager-certs" \
        --leader-elect=false \
        --cluster-name "$NAME" \
        --controllers '*' \
        --use-service-account-credentials=true \
        --root-ca-file "$pki/ca.crt" \
        --service-account-private-key-file "$pki/sa.key" \
        --cluster-signing-cert-file "$pki/ca.crt" \
        --cluster-signing-key-file "$pki/ca.key"
    start kube-scheduler \
        --kubeconfig "$RUN/scheduler.kubeconfig" \
        --authentication-kubeconfig "$RUN/scheduler.kubeconfig" \
        --authorization-kubeconfig "$RUN/scheduler.kubeconfig" \
        --client-ca-file "$pki/ca.crt" \
        --bind-address 127.0.0.1 \
        --secure-port "$SCHED_PORT" \
        --cert-dir "$RUN/scheduler-certs" \
        --leader-elect=false
    cp "$BIN/kwok-stages.yaml" "$RUN/kwok/stages.yaml"
    KWOK_WORKDIR="$RUN/kwok" start kwok \
        --kubeconfig "$RUN/kwok.kubeconfig" \
        --config "$RUN/kwok/stages.yaml" \
        --manage-all-nodes=false \
        --manage-nodes-with-label-selector "$KWOK_LABEL" \
        --node-lease-duration-seconds 40 \
        --cidr "$POD_CIDR"

    wait_for "kube-controller-manager /healthz" kube-controller-manager healthz "$KCM_PORT"
    wait_for "kube-scheduler /healthz" kube-scheduler healthz "$SCHED_PORT"
    wait_for "namespace default" kube-apiserver api /api/v1/namespaces/default
    wait_for "namespace kube-system" kube-apiserver api /api/v1/namespaces/kube-system
    wait_for "service account default/default" kube-controller-manager api /api/v1/namespaces/default/serviceaccounts/default
    wait_for "service account kube-system/default" kube-controller-manager api /api/v1/namespaces/kube-system/serviceaccounts/default
    wait_for "kwok" kwok grep -q 'Watch nodes' "$RUN/logs/kwok.log"
    wait_for "kube-apiserver /readyz" kube-apiserver api /readyz
    up_done "$t0" ""
}

# up_done T0 NOTE: records the start-up time and prints the admin kubeconfig's path.
up_done() {
    local took
    took=$(elapsed "$1")
    echo "$took" >"$RUN/startup-seconds"
    log "control plane $NAME ready in ${took}s (API https://127.0.0.1:$API_PORT)${2:+ $2}"
    echo "$RUN/kubeconfig"
}

cmd_down() {
    local all=0 keep=0 names=() a run
    for a in "$@"; do
        case $a in
        --all) all=1 ;;
        --keep-logs) keep=1 ;;
        -*) die "unknown flag $a" ;;
        *) names+=("$a") ;;
        esac
    done
    if ((all)); then
        for run in "$RUNS"/*/; do
            [[ -d $run ]] || continue
            run=${run%/}
            log "stopping ${run##*/}"
            stop_run "$run" "$keep"
        done
        # Anything of ours still running from a removed run dir.
        local d pid
        for d in /proc/[0-9]*; do
            pid=${d#/proc/}
            if is_ours "$pid" "$RUNS"; then
                log "killing leftover pid $pid"
                kill -KILL "$pid" 2>/dev/null || true
            fi
        done
        return 0
    fi
    ((${#names[@]})) || names=(kerf)
    for a in "${names[@]}"; do
        set_name "$a"
        if [[ -d $RUN ]]; then
            log "stopping $NAME"
            stop_run "$RUN" "$keep"
        else
            log "control plane $NAME is not running"
        fi
    done
}

cmd_env() {
    set_name "${1:-}"
    [[ -f $RUN/kubeconfig ]] || die "control plane $NAME is not running (no $RUN/kubeconfig)"
    printf 'export KUBECONFIG=%q\n' "$RUN/kubeconfig"
}

cmd_status() {
    if [[ ${1:-} == --all ]]; then
        local run rc=0
        for run in "$RUNS"/*/; do
            [[ -d $run ]] || continue
            run=${run%/}
            (cmd_status "${run##*/}") || rc=1
        done
        return $rc
    fi
    set_name "${1:-}"
    [[ -d $RUN ]] || { echo "$NAME: not running"; return 1; }
    [[ -f $RUN/ports.env ]] || { echo "$NAME: not running (logs kept in $RUN/logs)"; return 1; }
    local n pid ok=1
    echo "$NAME: $RUN"
    [[ -f $RUN/ports.env ]] && source "$RUN/ports.env"
    for n in "${COMPONENTS[@]}"; do
        if pid=$(our_pid "$RUN" "$n"); then
            printf '  %-24s running (pid %s)\n' "$n" "$pid"
        else
            printf '  %-24s NOT running\n' "$n"
            ok=0
        fi
    done
    if [[ -n ${API_PORT:-} ]]; then
        printf '  ports: etcd %s, kube-apiserver %s, kube-controller-manager %s, kube-scheduler %s\n' \
            "$ETCD_PORT" "$API_PORT" "$KCM_PORT" "$SCHED_PORT"
        if api /readyz >/dev/null 2>&1; then echo "  /readyz: ok"; else echo "  /readyz: FAILING"; ok=0; fi
    fi
    echo "  kubeconfig: $RUN/kubeconfig"
    ((ok))
}

cmd_user() {
    (($# >= 2)) || die "usage: scripts/cluster.sh user NAME USER [GROUP...]"
    set_name "$1"
    local user=$2 file
    shift 2
    load_ports
    need_tools
    file=${user//\//_}
    mkdir -p "$RUN/pki/users"
    client_cert "$RUN/pki/users" "$file" "$user" "$@"
    write_kubeconfig "$RUN/$file.kubeconfig" "$user" "$RUN/pki/users/$file.crt" "$RUN/pki/users/$file.key"
    echo "$RUN/$file.kubeconfig"
}

cmd_check() {
    set_name "${1:-}"
    load_ports
    "$ROOT/cluster/check.sh" "$NAME" "$RUN" "$BIN" "$ROOT"
}

usage() {
    sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
    exit "${1:-0}"
}

main() {
    local cmd=${1:-}
    (($#)) && shift
    case $cmd in
    build) cmd_build ;;
    up) cmd_up "$@" ;;
    down) cmd_down "$@" ;;
    env) cmd_env "$@" ;;
    status) cmd_status "$@" ;;
    user) cmd_user "$@" ;;
    check) cmd_check "$@" ;;
    -h | --help | help) usage 0 ;;
    *) usage 1 >&2 ;;
    esac
}

main "$@"
