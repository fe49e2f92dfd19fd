#!/usr/bin/env bash
# readme-check.sh: run every shell command README.md shows, as written, in a fresh clone
# of this repository, the way a new user would paste them; fail when one fails.
#
#   scripts/readme-check.sh            # all of them (a few minutes)
#   scripts/readme-check.sh -n         # list them with what will be done to each
#
# A few commands cannot run on a single machine without a cluster or root, or run forever;
# they are listed with the reason and skipped, or (servers) started and stopped after a few
# seconds, which passes when the server was still up. Every line runs as written. Open MPI
# refuses root, and more ranks than cores, unless told: README.md says how (two export
# lines), and an mpirun line runs after exactly those exports, taken from README.md, when
# this runs as root or on fewer than 4 cores (a README without them fails the check). The
# full test command is the one CI runs anyway.
set -uo pipefail

list_only=0
case "${1:-}" in
  "") ;;
  -n) list_only=1 ;;
  *) awk 'NR > 1 && /^#/ {sub(/^# ?/, ""); print; next} NR > 1 {exit}' "$0" >&2; exit 2 ;;
esac

repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
git clone -q "$repo" "$work/clone"
cd "$work/clone"

# skip: a command that needs what one machine does not have; reason after the tab.
skip_reason() {
  case "$1" in
    "go test -race -count=1 -timeout 15m ./..."*) echo "the full test suite: CI runs it as its own step" ;;
    sudo\ apt-get*|apt-get*) echo "installs system packages (CI installs Open MPI itself)" ;;
    srun\ *) echo "needs SLURM" ;;
    IBIS_REGISTRY=head-node*) echo "a template: head-node and ./myprogram are the reader's" ;;
    "ibis-registry -port 8888 -store etcd://etcd1"*) echo "a template: etcd1-3 are the reader's etcd cluster (docs/REGISTRY-HA.md runs one here)" ;;
    IBIS_REGISTRY=fe1*) echo "a template: fe1, fe2 and ./myprogram are the reader's" ;;
    "ibis-hub -listen :7700 -secret-file pool.secret"*) echo "a template: pool.secret is the reader's secret file (docs/GRIDS.md runs a hub here)" ;;
    IBIS_HUB=gateway*) echo "a template: gateway and ./myprogram are the reader's" ;;
    *dc-sites.sh*) [ "$can_netns" = 1 ] || echo "needs root and network namespaces, which this machine does not give" ;;
    *) return 1 ;;
  esac
}

# Servers run until stopped: started, left up for a few seconds, then stopped.
is_server() {
  case "$1" in
    *cmd/ibis-registry*) return 0 ;;
  esac
  return 1
}

# skip_reason prints nothing and succeeds for a line it lets run: undo that.
skip_reason_of() { local r; r="$(skip_reason "$1")" && [ -n "$r" ] && echo "$r"; }

# dc-sites.sh runs where it can: as root with network namespaces.
can_netns=0
if [ "$(id -u)" -eq 0 ] && ip netns add "readme-check-$$" 2>/dev/null; then
  ip netns del "readme-check-$$"
  can_netns=1
fi

# The README's own forms for running mpirun as root and with more ranks than cores.
mpi_root_export="$(grep -o 'export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1' README.md | head -1)"
mpi_over_export="$(grep -o 'export OMPI_MCA_rmaps_base_oversubscribe=1' README.md | head -1)"
mpi_prefix=""
if [ "$(id -u)" -eq 0 ]; then
  [ -n "$mpi_root_export" ] || { echo "readme-check: README.md no longer says how to run mpirun as root"; exit 1; }
  mpi_prefix+="$mpi_root_export; "
fi
if [ "$(nproc)" -lt 4 ]; then
  [ -n "$mpi_over_export" ] || { echo "readme-check: README.md no longer says how to run more ranks than cores"; exit 1; }
  mpi_prefix+="$mpi_over_export; "
fi

# The commands: every line of every ```sh block, comments after # kept (bash ignores
# them), continuation lines that are only a comment dropped.
mapfile -t cmds < <(awk '/^```sh/{f=1;next} /^```/{f=0} f && !/^[[:space:]]*#/ && NF' README.md)

failed=0
for c in "${cmds[@]}"; do
  if reason="$(skip_reason_of "$c")"; then
    echo "== skip: $c"
    echo "   ($reason)"
    continue
  fi
  case "$c" in
    *mpirun\ *) c="$mpi_prefix$c" ;;
  esac
  if [ "$list_only" = 1 ]; then
    if is_server "$c"; then echo "== start, then stop: $c"; else echo "== run: $c"; fi
    continue
  fi
  start=$(date +%s)
  if is_server "$c"; then
    echo "== start, then stop: $c"
    # In a process group of its own, so that stopping it stops what go run started.
    setsid bash -c "$c" >"$work/out" 2>&1 &
    pid=$!
    sleep 20 # time to build and start
    if kill -0 "$pid" 2>/dev/null; then
      kill -TERM -- "-$pid" 2>/dev/null
      wait "$pid" 2>/dev/null
      rc=0 # still serving when stopped: what a server should do
    else
      wait "$pid"
      rc=$?
      [ "$rc" = 0 ] && rc=1 # a server that ends by itself did not serve
    fi
  else
    echo "== run: $c"
    timeout 600 bash -c "$c" >"$work/out" 2>&1
    rc=$?
  fi
  if [ "$rc" != 0 ]; then
    echo "   FAILED (exit $rc) after $(( $(date +%s) - start ))s; its output:"
    sed 's/^/   | /' "$work/out" | tail -40
    failed=$((failed + 1))
  else
    echo "   ok ($(( $(date +%s) - start ))s)"
  fi
done
if [ "$failed" != 0 ]; then
  echo "readme-check: $failed README command(s) failed"
  exit 1
fi
echo "readme-check: every README command that one machine can run ran"
