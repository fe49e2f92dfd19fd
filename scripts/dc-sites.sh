#!/usr/bin/env bash
# Runs a divide-and-conquer pool split over emulated sites on this one machine: every site
# is a network namespace of its own, joined to the others through a bridge, with a wide-area
# latency and bandwidth on each site's link and none inside a site (docs/DC.md).
#
#   scripts/dc-sites.sh [-s SITES] [-n PROCS] [-d DELAY] [-b RATE] -- PROGRAM [ARGS...]
#   scripts/dc-sites.sh -s 4 -n 16 -d 10ms -b 100mbit -- bin/loadbal -steal crs -stats
#
# It needs root (network namespaces, tc): run it as root, or as a user with sudo, which it
# then runs itself under (after building its ibis-registry as that user, with the user's Go
# caches and modules).
#
# Defaults: 4 sites, 16 processes (process k at site k mod SITES), 10ms one-way latency,
# 100mbit per site. It creates namespaces and addresses of its own only (10.77.0.0/24 inside
# them; the host's network is not touched), runs an ibis-registry on the bridge, starts the
# processes in their sites with IBIS_SITE, IBIS_HOST and the pool of the registry, and
# removes everything when they end or it is interrupted. Its exit status is the first
# failing process's.
#
# The latency comes from tc netem on each site's link. A kernel without netem (no
# CONFIG_NET_SCH_NETEM, as on some virtual machines) gets the bandwidth from tc tbf and the
# latency from dc itself, which then holds every message to another site back by DELAY
# (IBIS_DC_WAN_DELAY); the script says which it used.
set -euo pipefail
SITES=4 PROCS=16 DELAY=10ms RATE=100mbit
usage() { awk 'NR > 1 && /^#/ {sub(/^# ?/, ""); print; next} NR > 1 {exit}' "$0" >&2; exit 2; }
args=("$@")
while getopts "s:n:d:b:h" o; do
  case $o in
    s) SITES=$OPTARG ;; n) PROCS=$OPTARG ;; d) DELAY=$OPTARG ;; b) RATE=$OPTARG ;; *) usage ;;
  esac
done
shift $((OPTIND - 1))
[ "${1:-}" = "--" ] && shift
[ $# -ge 1 ] || usage
[[ $SITES =~ ^[0-9]+$ && $SITES -ge 1 && $SITES -le 200 ]] || { echo "dc-sites: -s $SITES: 1 to 200 sites" >&2; exit 2; }
[[ $PROCS =~ ^[0-9]+$ && $PROCS -ge 1 && $PROCS -le 512 ]] || { echo "dc-sites: -n $PROCS: 1 to 512 processes" >&2; exit 2; }
for tool in ip tc; do command -v $tool >/dev/null || { echo "dc-sites: $tool not found (apt-get install iproute2)" >&2; exit 2; }; done
PROGRAM=$(command -v "$1" || true); shift
[ -n "$PROGRAM" ] && [ -x "$PROGRAM" ] || { echo "dc-sites: no program to run" >&2; exit 2; }

script="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
chmod 755 "$tmp" # root (through sudo) runs the registry built here
registry="${DC_SITES_REGISTRY:-}"
if [ -z "$registry" ]; then
  # Built as the caller, before any sudo: root's Go may have neither the caches nor the
  # modules (nor a network to fetch them).
  registry="$tmp/ibis-registry"
  go build -o "$registry" ./cmd/ibis-registry || exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { rm -rf "$tmp"; echo "dc-sites: needs root (network namespaces and tc), and there is no sudo: run it as root" >&2; exit 2; }
  echo "dc-sites: needs root (network namespaces and tc): running itself with sudo" >&2
  status=0
  sudo env PATH="$PATH" DC_SITES_REGISTRY="$registry" "$script" "${args[@]}" || status=$?
  rm -rf "$tmp"
  exit $status
fi

tag="ibis$$"
hub="$tag-hub"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  for s in $(seq 0 $((SITES - 1))); do ip netns del "$tag-s$s" 2>/dev/null || true; done
  ip netns del "$hub" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

ip netns add "$hub"
ip -n "$hub" link set lo up
ip -n "$hub" link add br0 type bridge
ip -n "$hub" addr add 10.77.0.254/24 dev br0
ip -n "$hub" link set br0 up
netem=1
for s in $(seq 0 $((SITES - 1))); do
  ns="$tag-s$s"
  ip netns add "$ns"
  ip -n "$ns" link set lo up
  ip link add "$tag-a$s" netns "$ns" type veth peer name "$tag-b$s" netns "$hub"
  ip -n "$ns" link set "$tag-a$s" name eth0
  ip -n "$ns" addr add "10.77.0.$((s + 1))/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$hub" link set "$tag-b$s" master br0 up
  # The site's link to the others: latency and bandwidth on what leaves it.
  if [ $netem -eq 1 ] && ! ip netns exec "$ns" tc qdisc add dev eth0 root netem delay "$DELAY" rate "$RATE" 2>/dev/null; then
    netem=0
  fi
  if [ $netem -eq 0 ]; then
    ip netns exec "$ns" tc qdisc add dev eth0 root tbf rate "$RATE" burst 64kb latency 100ms
  fi
done
if [ $netem -eq 1 ]; then
  echo "dc-sites: $SITES sites, $PROCS processes, $DELAY one way and $RATE per site (tc netem)" >&2
else
  echo "dc-sites: $SITES sites, $PROCS processes, $RATE per site (tc tbf); no netem in this kernel: dc delays messages between sites by $DELAY" >&2
  export IBIS_DC_WAN_DELAY=$DELAY
fi

ip netns exec "$hub" "$registry" -host 10.77.0.254 -port 8888 >"$tmp/registry.log" 2>&1 &
pids+=($!)
for k in $(seq 0 $((PROCS - 1))); do
  s=$((k % SITES))
  ip netns exec "$tag-s$s" env IBIS_REGISTRY=10.77.0.254:8888 IBIS_POOL="sites-$tag" IBIS_POOL_SIZE="$PROCS" \
    IBIS_SITE="site$s" IBIS_HOST="10.77.0.$((s + 1))" IBIS_RANK="$k" "$PROGRAM" "$@" &
  pids+=($!)
done
status=0
for p in "${pids[@]:1}"; do
  wait "$p" && rc=0 || rc=$?
  [ $status -ne 0 ] || status=$rc
done
exit $status
