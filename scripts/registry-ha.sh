#!/usr/bin/env bash
# Runs a highly available registry on this one machine and a command against it: three
# etcd nodes (Debian's etcd-server), two ibis-registry front ends over them, and the
# command with IBIS_REGISTRY naming both front ends (docs/REGISTRY-HA.md).
#
#   scripts/registry-ha.sh [-e NODES] [-f FRONTENDS] [-k DELAY] -- COMMAND [ARGS...]
#   scripts/registry-ha.sh -k 3s -- go run ./cmd/ibis-run -np 4 -registry '$IBIS_REGISTRY' -- bin/sor -n 3000
#
# -e: etcd nodes (default 3), -f: front ends (default 2), -k: SIGKILL the first front end
# this long after the command starts (default: never), to watch its members move. A literal
# $IBIS_REGISTRY in the arguments is replaced by the list of front ends. Everything runs on
# 127.0.0.1 with ports the kernel picked moments before, in a temporary directory that is
# removed at the end, with every process the script started. The front ends' event logs
# (-events) are printed at the end: they must be the same. Its exit status is the
# command's.
set -euo pipefail
NODES=3 FRONTS=2 KILL=""
usage() { awk 'NR > 1 && /^#/ {sub(/^# ?/, ""); print; next} NR > 1 {exit}' "$0" >&2; exit 2; }
while getopts "e:f:k:h" o; do
  case $o in
    e) NODES=$OPTARG ;; f) FRONTS=$OPTARG ;; k) KILL=$OPTARG ;; *) usage ;;
  esac
done
shift $((OPTIND - 1))
[ "${1:-}" = "--" ] && shift
[ $# -ge 1 ] || usage
[[ $NODES =~ ^[0-9]+$ && $NODES -ge 1 && $NODES -le 7 ]] || { echo "registry-ha: -e $NODES: 1 to 7 etcd nodes" >&2; exit 2; }
[[ $FRONTS =~ ^[0-9]+$ && $FRONTS -ge 1 && $FRONTS -le 8 ]] || { echo "registry-ha: -f $FRONTS: 1 to 8 front ends" >&2; exit 2; }
ETCD=$(command -v etcd || true)
[ -n "$ETCD" ] || { echo "registry-ha: etcd not found (apt-get install etcd-server)" >&2; exit 2; }

repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

# free_port prints a port the kernel has just picked (and let go).
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

(cd "$repo" && go build -o "$work/ibis-registry" ./cmd/ibis-registry)

cluster="" clients=()
for i in $(seq 0 $((NODES - 1))); do
  cp[$i]=$(free_port) pp[$i]=$(free_port)
  cluster+="${cluster:+,}n$i=http://127.0.0.1:${pp[$i]}"
  clients+=("127.0.0.1:${cp[$i]}")
done
for i in $(seq 0 $((NODES - 1))); do
  "$ETCD" --name "n$i" --data-dir "$work/n$i" \
    --listen-client-urls "http://127.0.0.1:${cp[$i]}" --advertise-client-urls "http://127.0.0.1:${cp[$i]}" \
    --listen-peer-urls "http://127.0.0.1:${pp[$i]}" --initial-advertise-peer-urls "http://127.0.0.1:${pp[$i]}" \
    --initial-cluster "$cluster" --initial-cluster-state new >"$work/n$i.log" 2>&1 &
  pids+=($!)
done
endpoints=$(IFS=,; echo "${clients[*]}")
echo "registry-ha: etcd on $endpoints"

fronts=()
for i in $(seq 0 $((FRONTS - 1))); do
  "$work/ibis-registry" -host 127.0.0.1 -port 0 -events -store "etcd://$endpoints" >"$work/fe$i.out" 2>"$work/fe$i.err" &
  fpid[$i]=$!
  pids+=($!)
done
for i in $(seq 0 $((FRONTS - 1))); do
  for _ in $(seq 100); do
    addr=$(sed -n 's/^ibis-registry listening on //p' "$work/fe$i.out")
    [ -n "$addr" ] && break
    sleep 0.1
  done
  [ -n "$addr" ] || { echo "registry-ha: front end $i did not start:" >&2; cat "$work/fe$i.err" >&2; exit 1; }
  fronts+=("$addr")
done
IBIS_REGISTRY=$(IFS=,; echo "${fronts[*]}")
export IBIS_REGISTRY
echo "registry-ha: front ends IBIS_REGISTRY=$IBIS_REGISTRY"

args=()
for a in "$@"; do args+=("${a//\$IBIS_REGISTRY/$IBIS_REGISTRY}"); done
if [ -n "$KILL" ]; then
  ( sleep "$KILL"; echo "registry-ha: SIGKILL front end 0 (${fronts[0]})"; kill -KILL "${fpid[0]}" ) &
  pids+=($!)
fi
status=0
"${args[@]}" || status=$?

for i in $(seq 0 $((FRONTS - 1))); do
  echo "registry-ha: events at front end $i (${fronts[$i]}):"
  grep -E '^[0-9T:.Z-]+ #' "$work/fe$i.out" | cut -d' ' -f2- || true
done
exit $status
