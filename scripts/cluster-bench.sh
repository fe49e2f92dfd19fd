#!/usr/bin/env bash
# SOR and Barnes-Hut across 4 virtual hosts against the same P on loopback, and the join
# time of a 16-process pool under srun, in one run (root; docs/CLUSTERS.md, Figures):
#   [PLOT=FILE.png] [RATE=1gbit] scripts/cluster-bench.sh [SOR_ITERS] [BH_STEPS] [ROUNDS] [JOINS]
#   defaults: 20 2 5 2 (SOR n=4096, Barnes-Hut 50,000 bodies, P = 1, 2, 4, tcp and nio)
# It builds its own virtual cluster (scripts/vcluster.sh's command, cluster id ivc-figures
# or $IBIS_VCLUSTER_ID: 4 hosts, SLURM, with RATE a tc tbf rate per link) and removes it
# on exit. Cluster runs: an ibis-registry server on h1, rank r on host h(r+1), started with
# ibis-run's environment (IBIS_REGISTRY, IBIS_POOL, IBIS_POOL_SIZE, IBIS_RANK), no
# IBIS_HOST. Loopback runs: the apps' own -np P. Both unbound to cores (-bind=false), as
# the processes on the hosts are, so that only the network path differs. Each round runs
# every configuration once, in turn, so that the machine's noise spreads over all of them;
# the tables give the best and the median of the rounds, the ratio cluster/loopback of
# each, and the median of the ratios of the two runs of one round (adjacent in time, so a
# burst of the machine's other load falls on both runs less often than on one).
# A checksum that differs between a cluster run and a loopback run (or between rounds)
# fails the script. The join time: `srun -N 4 -n 16` of internal/joinprobe on the cluster,
# from just before srun starts until the last process has seen the pool complete (and when
# the last process started: srun's part), JOINS times per round; beside it the same pool
# started by `ibis-run -np 16` on loopback.
# With PLOT=FILE.png also speedup plots (cmd/speedplot) FILE-sor.png and FILE-barneshut.png.
# Markdown on stdout, progress on stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
SOR_ITERS=${1:-20} BH_STEPS=${2:-2} ROUNDS=${3:-5} JOINS=${4:-2}
SOR_N=4096 BH_BODIES=50000 HOSTS=4 JOIN_NP=16 PROCS="1 2 4" IMPLS="tcp nio"
export IBIS_VCLUSTER_ID=${IBIS_VCLUSTER_ID:-ivc-figures}
# The caller's own IBIS_* settings (a pinned host, an implementation, a pool) would change
# what one side measures and not the other: the runs get only what this script sets.
for v in $(compgen -e | grep '^IBIS_' | grep -vx 'IBIS_VCLUSTER_ID'); do unset "$v"; done
for v in "$SOR_ITERS" "$BH_STEPS" "$ROUNDS" "$JOINS"; do
  [[ $v =~ ^[1-9][0-9]*$ ]] || { echo "cluster-bench: $v: want positive integers: [SOR_ITERS] [BH_STEPS] [ROUNDS] [JOINS]" >&2; exit 2; }
done
[ "$(id -u)" -eq 0 ] || { echo "cluster-bench: needs root (it builds a virtual cluster of network namespaces)" >&2; exit 1; }

tmp=$(mktemp -d)
reg_pid= owned=
cleanup() {
  if [ -n "$reg_pid" ]; then kill "$reg_pid" 2>/dev/null || true; wait "$reg_pid" 2>/dev/null || true; fi
  if [ -n "$owned" ]; then "$tmp/vcluster" down >/dev/null 2>&1 || echo "cluster-bench: '$tmp/vcluster down' failed: IBIS_VCLUSTER_ID=$IBIS_VCLUSTER_ID scripts/vcluster.sh down" >&2; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
fail() { echo "cluster-bench: $*" >&2; exit 1; }

go build -o "$tmp/vcluster" ./internal/vcluster/cmd/vcluster
go build -o "$tmp/sor" ./apps/sor
go build -o "$tmp/barneshut" ./apps/barneshut
go build -o "$tmp/joinprobe" ./internal/joinprobe
go build -o "$tmp/ibis-registry" ./cmd/ibis-registry
go build -o "$tmp/ibis-run" ./cmd/ibis-run
vc=$tmp/vcluster

load_start=$(cut -d' ' -f1-3 /proc/loadavg)
"$vc" status >/dev/null 2>&1 && fail "a cluster $IBIS_VCLUSTER_ID is up already: '$vc down' it (IBIS_VCLUSTER_ID=$IBIS_VCLUSTER_ID scripts/vcluster.sh down) or set IBIS_VCLUSTER_ID"
"$vc" up -hosts "$HOSTS" -slurm ${RATE:+-rate "$RATE"} >"$tmp/up.log" 2>&1 || { cat "$tmp/up.log" >&2; fail "vcluster up failed"; }
owned=1
reg_host=$(awk '$1 == "h1" && $3 == "namespace" { print $2 }' "$tmp/up.log")
[ -n "$reg_host" ] || { cat "$tmp/up.log" >&2; fail "no address of h1 in vcluster's status"; }
"$vc" exec h1 -- "$tmp/ibis-registry" -host "$reg_host" -port 8888 >"$tmp/registry.log" 2>&1 &
reg_pid=$!
for _ in $(seq 100); do grep -q listening "$tmp/registry.log" && break; kill -0 "$reg_pid" 2>/dev/null || break; sleep 0.1; done
grep -q listening "$tmp/registry.log" || { cat "$tmp/registry.log" >&2; fail "the registry server on h1 did not start"; }
registry=$reg_host:8888

# args APP: the application's size and length flags.
args() { case $1 in sor) echo "-n $SOR_N -iters $SOR_ITERS" ;; barneshut) echo "-bodies $BH_BODIES -steps $BH_STEPS" ;; esac; }

# cluster APP IMPL P RUN: one process per host, h1..hP, in a pool of its own; prints rank
# 0's result line.
cluster() {
  local app=$1 impl=$2 p=$3 run=$4 pids=() r code=0
  for r in $(seq 0 $((p - 1))); do
    "$vc" exec "h$((r + 1))" -- env IBIS_REGISTRY="$registry" IBIS_POOL="bench-$run" IBIS_POOL_SIZE="$p" IBIS_RANK="$r" \
      "$tmp/$app" -impl "$impl" $(args "$app") -q -timeout 10m >"$tmp/out.$r" 2>&1 &
    pids+=($!)
  done
  for r in "${!pids[@]}"; do wait "${pids[$r]}" || code=$?; done
  if [ "$code" -ne 0 ] || ! grep "^$app-result" "$tmp/out.0"; then
    for r in $(seq 0 $((p - 1))); do echo "--- rank $r on h$((r + 1)):" >&2; cat "$tmp/out.$r" >&2; done
    fail "$app -impl $impl across $p hosts failed (exit $code)"
  fi
  rm -f "$tmp"/out.*
}

# loopback APP IMPL P: the same with -np P on this machine's loopback.
loopback() {
  local out
  out=$("$tmp/$1" -np "$3" -bind=false -impl "$2" $(args "$1") -q -timeout 10m 2>&1) || { echo "$out" >&2; fail "$1 -np $3 -impl $2 failed"; }
  grep "^$1-result" <<<"$out" || { echo "$out" >&2; fail "$1 -np $3 -impl $2 printed no result"; }
}

# joins WHERE: one pool of JOIN_NP joinprobes; prints when its last process started and
# when the last one saw the pool complete, in seconds since just before the launcher began.
joins() {
  local out t0
  t0=$(date +%s%N)
  case $1 in
    cluster) out=$("$vc" srun -- -N "$HOSTS" -n "$JOIN_NP" env IBIS_JOINPROBE_T0="$t0" "$tmp/joinprobe" 2>&1) ;;
    loopback) out=$(IBIS_JOINPROBE_T0=$t0 "$tmp/ibis-run" -np "$JOIN_NP" -- "$tmp/joinprobe" 2>&1) ;;
  esac || { echo "$out" >&2; fail "joinprobe ($1) failed"; }
  [ "$(grep -c 'joinprobe-result' <<<"$out")" -eq "$JOIN_NP" ] || { echo "$out" >&2; fail "joinprobe ($1): not $JOIN_NP results"; }
  echo "$(grep -o 'started=[0-9.]*' <<<"$out" | cut -d= -f2 | sort -g | tail -1)" \
    "$(grep -o 'closed=[0-9.]*' <<<"$out" | cut -d= -f2 | sort -g | tail -1)"
}

run=0
for round in $(seq "$ROUNDS"); do
  for app in sor barneshut; do
    for impl in $IMPLS; do
      for p in $PROCS; do
        for where in cluster loopback; do
          run=$((run + 1))
          if [ "$where" = cluster ]; then line=$(cluster "$app" "$impl" "$p" "$run"); else line=$(loopback "$app" "$impl" "$p"); fi
          secs=$(sed -n 's/.*seconds=\([0-9.]*\).*/\1/p' <<<"$line")
          sum=$(sed -n 's/.*checksum=\([^ ]*\).*/\1/p' <<<"$line")
          [ -n "$secs" ] && [ -n "$sum" ] || fail "$app $impl P=$p $where: no time or checksum in: $line"
          echo "$app $impl $p $where $secs $sum $round" >>"$tmp/results"
          echo "round $round: $app $impl P=$p $where ${secs}s checksum $sum" >&2
        done
      done
    done
  done
  for _ in $(seq "$JOINS"); do
    for where in cluster loopback; do
      set -- $(joins "$where")
      [ $# -eq 2 ] || fail "joinprobe ($where): no times"
      echo "join $where $1 $2" >>"$tmp/joins"
      echo "round $round: join of $JOIN_NP, $where: last started after ${1}s, pool complete after ${2}s" >&2
    done
  done
done

# Every run of an application with one size must give one checksum, whatever the host, the
# implementation or the number of processes: the figures compare equal work.
bad=$(awk '{ key = $1; if (!(key in sum)) sum[key] = $6; else if (sum[key] != $6) print $1 " " $2 " P=" $3 " " $4 ": checksum " $6 ", other runs " sum[key] }' "$tmp/results")
[ -z "$bad" ] || fail "results differ between runs (cluster against loopback):
$bad"

echo "SOR n=$SOR_N, $SOR_ITERS iterations; Barnes-Hut $BH_BODIES bodies, $BH_STEPS steps; $ROUNDS rounds"
echo "$HOSTS virtual hosts${RATE:+, links limited to $RATE}; $(nproc) cores (shared); load average $load_start at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end"
echo
echo "| application | impl | P | cluster best s | loopback best s | cluster/loopback (best) | cluster median s | loopback median s | cluster/loopback (median) | median of the rounds' ratios | checksum |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
awk '
  function sorted(list, v,   m, a, b, x) {
    m = split(substr(list, 2), v, " ")
    for (a = 1; a <= m; a++) for (b = a + 1; b <= m; b++) if (v[b] < v[a]) { x = v[a]; v[a] = v[b]; v[b] = x }
    return m
  }
  function median(list,   v, m) { m = sorted(list, v); return (m % 2) ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2 }
  function best(list,   v) { sorted(list, v); return v[1] }
  { row = $1 " " $2 " " $3; t[row " " $4] = t[row " " $4] " " $5; sum[$1] = $6; at[row " " $4 " " $7] = $5
    if (!(row in seen)) { seen[row] = 1; order[++k] = row }
    if ((row " cluster " $7) in at && (row " loopback " $7) in at) ratios[row] = ratios[row] " " at[row " cluster " $7] / at[row " loopback " $7] }
  END {
    for (i = 1; i <= k; i++) {
      split(order[i], f, " "); c = t[order[i] " cluster"]; l = t[order[i] " loopback"]
      printf "| %s | %s | %d | %.3f | %.3f | %.2f | %.3f | %.3f | %.2f | %.2f | %s |\n", f[1], f[2], f[3],
        best(c), best(l), best(c) / best(l), median(c), median(l), median(c) / median(l), median(ratios[order[i]]), sum[f[1]]
    }
  }' "$tmp/results"
echo
echo "Join time of a pool of $JOIN_NP (tcp), from just before the launcher starts until the last process has seen the pool complete,"
echo "and when the last process started (the launcher's part):"
echo
echo "| where | launcher | pool complete, best s | pool complete, median s | last process started, median s | runs |"
echo "|---|---|---|---|---|---|"
awk -v hosts="$HOSTS" -v np="$JOIN_NP" '
  function median(list,   m, v, a, b, x) {
    m = split(substr(list, 2), v, " ")
    for (a = 1; a <= m; a++) for (b = a + 1; b <= m; b++) if (v[b] < v[a]) { x = v[a]; v[a] = v[b]; v[b] = x }
    lo = v[1]; runs = m
    return (m % 2) ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
  }
  { s[$2] = s[$2] " " $3; c[$2] = c[$2] " " $4 }
  END {
    n = split("cluster loopback", w, " ")
    for (i = 1; i <= n; i++) {
      ms = median(s[w[i]]); mc = median(c[w[i]])
      if (w[i] == "cluster") printf "| %d virtual hosts | srun -N %d -n %d | %.3f | %.3f | %.3f | %d |\n", hosts, hosts, np, lo, mc, ms, runs
      else printf "| loopback | ibis-run -np %d | %.3f | %.3f | %.3f | %d |\n", np, lo, mc, ms, runs
    }
  }' "$tmp/joins"

if [ -n "${PLOT:-}" ]; then
  base=${PLOT%.*} ext=${PLOT##*.}
  for app in sor barneshut; do
    title="SOR ${SOR_N}x${SOR_N}, $SOR_ITERS iterations"
    [ "$app" = barneshut ] && title="Barnes-Hut, $BH_BODIES bodies, $BH_STEPS steps"
    awk -v app="$app" '$1 == app { print $2 "-" $4, $3, $5 }' "$tmp/results" |
      go run ./cmd/speedplot -o "$base-$app.$ext" -title "$title: $HOSTS virtual hosts against loopback, $(nproc) cores"
    echo; echo "speedup plot: $base-$app.$ext"
  done
fi
