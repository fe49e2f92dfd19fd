#!/usr/bin/env bash
# Benchmarks of divide-and-conquer with work stealing (docs/DC.md), in one run:
#   scripts/dc-bench.sh speed  [ROUNDS]        fib and nqueens on 2 processes against the same
#                                              recursion as goroutines in one process
#   scripts/dc-bench.sh steals [P...]          steal attempts per successful steal of RS, CRS and
#                                              TRS on the five loadbal distributions and the UTS
#                                              sample trees, P processes (default 16 32 64)
#   sudo scripts/dc-bench.sh sites [P...]      RS, CRS and TRS over 4 emulated sites (10 ms,
#                                              100 Mbit/s; scripts/dc-sites.sh), P processes
# Each prints a Markdown table on stdout; progress goes to stderr. DC_BIN=DIR takes the
# programs (fib, nqueens, uts, loadbal) already built in DIR instead of building them, so
# that a timing run under a lock compiles nothing and can compare two builds.
set -euo pipefail
cd "$(dirname "$0")/.."
usage() { awk 'NR > 1 && /^#/ {sub(/^# ?/, ""); print; next} NR > 1 {exit}' "$0" >&2; exit 2; }
mode=${1:-speed}; shift || true
case $mode in speed|steals|sites) ;; *) usage ;; esac
for n in "$@"; do # ROUNDS or P: counts
  [[ $n =~ ^[1-9][0-9]*$ ]] || { echo "dc-bench.sh: $mode: \"$n\" is not a count (1 or more)" >&2; usage; }
done
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
bin=${DC_BIN:-$tmp}
if [ -z "${DC_BIN:-}" ]; then
  for app in fib nqueens uts loadbal; do go build -o "$tmp/$app" "./apps/$app"; done
fi

# field FILE EXPR: evaluates a Python expression over the JSON object j of each line of FILE.
field() { python3 -c 'import json,sys
for l in open(sys.argv[1]):
    j=json.loads(l); t=j.get("statistics",{}).get("total",{}); print(eval(sys.argv[2]))' "$1" "$2"; }

case $mode in
speed)
  ROUNDS=${1:-5}
  for r in $(seq "$ROUNDS"); do
    "$bin/fib" -np 2 -n 42 -threshold 22 -json >>"$tmp/fib-dc"
    "$bin/fib" -goroutines -n 42 -threshold 22 -json >>"$tmp/fib-go"
    "$bin/nqueens" -np 2 -n 15 -depth 4 -json >>"$tmp/nq-dc"
    "$bin/nqueens" -goroutines -n 15 -depth 4 -json >>"$tmp/nq-go"
    echo "round $r done" >&2
  done
  echo "| program | dc, 2 processes (s, median of $ROUNDS) | goroutines, 1 process (s) | ratio |"
  echo "|---|---:|---:|---:|"
  for p in fib nq; do
    a=$(field "$tmp/$p-dc" 'j["seconds"]' | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')
    b=$(field "$tmp/$p-go" 'j["seconds"]' | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')
    name=$([ $p = fib ] && echo "fib(42), threshold 22" || echo "15-queens, depth 4")
    awk -v n="$name" -v a="$a" -v b="$b" 'BEGIN {printf "| %s | %.3f | %.3f | %.2f |\n", n, a, b, a/b}'
  done
  ;;
steals)
  [ $# -gt 0 ] || set -- 16 32 64
  loads=("loadbal -dist balanced" "loadbal -dist fib" "loadbal -dist ramp" "loadbal -dist comb" "loadbal -dist random" "uts -tree T1" "uts -tree T3")
  echo "| load | P | RS att/steal | CRS att/steal | TRS att/steal | TRS forwarded | RS s | CRS s | TRS s |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
  for p in "$@"; do
    for load in "${loads[@]}"; do
      row="| ${load#* } | $p"; secs=""
      for algo in rs crs trs; do
        set -- $load
        "$bin/$1" "${@:2}" -np "$p" -steal "$algo" -json -timeout 10m >"$tmp/out"
        row+=" | $(field "$tmp/out" '"%.2f" % (t["steal_attempts"]/max(t["steals"],1))')"
        secs+=" | $(field "$tmp/out" '"%.2f" % j["seconds"]')"
        [ $algo = trs ] && fw=$(field "$tmp/out" 't["forwarded"]')
        echo "$load P=$p $algo done" >&2
      done
      echo "$row | $fw$secs |"
    done
  done
  ;;
sites)
  [ $# -gt 0 ] || set -- 16 32
  echo "| load | P | algorithm | seconds | att/steal | wide-area messages |"
  echo "|---|---:|---|---:|---:|---:|"
  for p in "$@"; do
    for load in "loadbal -dist balanced -size 13" "loadbal -dist random" "uts -tree T1"; do
      for algo in rs crs trs; do
        set -- $load
        scripts/dc-sites.sh -s 4 -n "$p" -d 10ms -b 100mbit -- "$bin/$1" "${@:2}" -steal "$algo" -json -timeout 10m >"$tmp/out"
        echo "| ${load#* } | $p | $algo | $(field "$tmp/out" '"%.2f | %.2f | %d" % (j["seconds"], t["steal_attempts"]/max(t["steals"],1), t["wide_area_messages"])') |"
        echo "$load P=$p $algo done" >&2
      done
    done
  done
  ;;
esac
