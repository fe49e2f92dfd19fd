#!/usr/bin/env bash
# Scaling to many cores (docs/PERFORMANCE.md, "Scaling"), in one run, for a many-core machine:
#   scripts/scale-bench.sh [-p "1 2 4 8 16"] [-r ROUNDS] [-quick] [-o DIR]
# SOR (n 4096, 100 iterations), Barnes-Hut (50,000 bodies, 3 steps), fib(44) with threshold 24
# (and the same recursion as goroutines in one process) and UTS T3 with TRS and RS, each at
# every P, every process its own OS process (tcp); then ibis-bench masterworker at 8 and 64
# workers (explicit, upcall and concurrent masters against the raw-socket server). Each round
# runs every configuration once, in turn; the table gives the best time of the rounds, the
# speedup over P=1 and, at the largest P, where the time went: SOR's and Barnes-Hut's phases
# (-phases: mean share of the wall time over the ranks) with the work inflation (P x a rank's
# sweep or walk time over P=1's), and the dc programs' idle share (time looking for work over
# P x wall). -quick shrinks every problem for a check on a small machine. Binaries are built
# with CGO_ENABLED=0 into DIR (default a temporary directory), so that DIR can be copied to a
# machine without Go: run it there with BIN=DIR (nothing is built then).
# Prints a Markdown table on stdout; progress and every result line go to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
PS="1 2 4 8 16" ROUNDS=3 QUICK=0 DIR=""
usage() { awk 'NR > 1 && /^#/ {sub(/^# ?/, ""); print; next} NR > 1 {exit}' "$0" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    -p|-r|-o) [ $# -ge 2 ] || { echo "scale-bench.sh: $1 wants a value" >&2; usage; } ;;&
    -p) PS=$2; shift 2 ;;
    -r) ROUNDS=$2; shift 2 ;;
    -quick) QUICK=1; shift ;;
    -o) DIR=$2; shift 2 ;;
    *) usage ;;
  esac
done
for n in $ROUNDS $PS; do
  [[ $n =~ ^[1-9][0-9]*$ ]] || { echo "scale-bench.sh: \"$n\" is not a count (1 or more) in -r or -p" >&2; usage; }
done
[ -n "$PS" ] || { echo "scale-bench.sh: -p names no process count" >&2; usage; }
out=$(mktemp) work=$(mktemp) made=""
trap 'rm -f "$out" "$work"; [ -z "$made" ] || rm -rf "$made"' EXIT
if [ -n "${BIN:-}" ]; then
  DIR=$BIN
else
  [ -n "$DIR" ] || { DIR=$(mktemp -d); made=$DIR; }
  mkdir -p "$DIR"
  for app in sor barneshut fib uts; do CGO_ENABLED=0 go build -o "$DIR/$app" "./apps/$app"; done
  CGO_ENABLED=0 go build -o "$DIR/ibis-bench" ./cmd/ibis-bench
fi
if [ $QUICK -eq 1 ]; then
  sor="-n 512 -iters 50" bh="-bodies 4000 -steps 2" fib="-n 30 -threshold 16" uts="-tree T1"
  mw="-workers 8 -duration 200ms"
else
  sor="-n 4096 -iters 100" bh="-bodies 50000 -steps 3" fib="-n 44 -threshold 24" uts="-tree T3"
  mw="-workers 8,64"
fi
maxp=$(tr ' ' '\n' <<<"$PS" | sort -n | tail -1)

# run NAME P COMMAND...: runs a configuration, records "NAME P SECONDS EXTRA" in $out, where
# EXTRA is the phase shares (SOR, Barnes-Hut) or the idle share (dc) and the check value.
run() {
  local name=$1 p=$2; shift 2
  local text secs extra
  # A configuration that fails is reported and left out of the table; the run goes on.
  text=$("$@" 2>/dev/null) || { echo "$name P=$p FAILED: $*" >&2; return 0; }
  case $name in
    sor*|barneshut*)
      secs=$(sed -n 's/.*-result .*seconds=\([0-9.]*\).*/\1/p' <<<"$text")
      extra=$(sed -n 's/.*-phase name=\([a-z]*\) .* share=\([0-9.]*\)/\1 \2/p' <<<"$text" | awk '{printf "%s%s %.1f%%", (NR>1 ? ", " : ""), $1, 100*$2}')
      extra+="; checksum $(sed -n 's/.*-result .*checksum=\([^ ]*\).*/\1/p' <<<"$text")"
      # The divided work's mean seconds per rank (SOR's sweeps, Barnes-Hut's walks), for
      # the work inflation: how much slower the same work runs with P cores busy.
      local phase=compute
      [ "${name#barneshut}" = "$name" ] || phase=walk
      sed -n "s/.*-phase name=$phase .* mean=\([0-9.]*\) .*/$name $p \1/p" <<<"$text" >>"$work" ;;
    *)
      secs=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["seconds"])' <<<"$text" || true)
      extra=$(python3 -c 'import json,sys
j=json.load(sys.stdin); s=j.get("statistics"); r=j["result"]
r="nodes %d" % r["nodes"] if "nodes" in r else "fib %d" % r["fib"] if "fib" in r else r
if s: t=s["total"]; print("idle %.1f%%, %d steals, %.2f attempts/steal; %s" % (100*t["idle_ns"]/1e9/max(j["processes"],1)/j["seconds"], t["steals"], t["steal_attempts"]/max(t["steals"],1), r))
else: print(r)' <<<"$text" || true) ;;
  esac
  [ -n "$secs" ] || { echo "$name P=$p: no time in its output" >&2; return 0; }
  echo "$name $p $secs $extra" >>"$out"
  echo "$name P=$p: ${secs}s ($extra)" >&2
}

for r in $(seq "$ROUNDS"); do
  for p in $PS; do
    run sor "$p" "$DIR/sor" -np "$p" $sor -q -phases
    run barneshut "$p" "$DIR/barneshut" -np "$p" $bh -q -phases
    run fib "$p" "$DIR/fib" -np "$p" $fib -json -progress 0
    run "uts-trs" "$p" "$DIR/uts" -np "$p" $uts -steal trs -json -progress 0
    run "uts-rs" "$p" "$DIR/uts" -np "$p" $uts -steal rs -json -progress 0
  done
  run "fib-goroutines" 1 "$DIR/fib" -goroutines $fib -json -progress 0
  echo "round $r of $ROUNDS done" >&2
done

[ -s "$out" ] || { echo "scale-bench.sh: no configuration ran to the end (their errors are above)" >&2; exit 1; }
echo "Machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'); $(date -u +%F) UTC; $ROUNDS rounds, best time"
echo
echo "| program | P | best s | speedup vs P=1 | where the time went (at P=$maxp; last round) |"
echo "|---|---:|---:|---:|---|"
for name in sor barneshut fib fib-goroutines uts-trs uts-rs; do
  one=$(awk -v n="$name" '$1==n && $2==1 {print $3}' "$out" | sort -g | head -1)
  for p in $PS; do
    best=$(awk -v n="$name" -v p="$p" '$1==n && $2==p {print $3}' "$out" | sort -g | head -1)
    [ -n "$best" ] || continue
    extra=""
    if [ "$p" = "$maxp" ] || [ "$name" = fib-goroutines ]; then
      extra=$(awk -v n="$name" -v p="$p" '$1==n && $2==p {$1=$2=$3=""; e=$0} END {sub(/^ +/, "", e); print e}' "$out")
      # Work inflation: P x the divided work's mean time per rank at P, over its time at
      # P = 1 (the least of the rounds each). Above 1, the cores slow each other down
      # (memory bandwidth, clock speed with every core busy): a bound no message can move.
      w1=$(awk -v n="$name" '$1==n && $2==1 {print $3}' "$work" | sort -g | head -1)
      wp=$(awk -v n="$name" -v p="$p" '$1==n && $2==p {print $3}' "$work" | sort -g | head -1)
      if [ -n "$w1" ] && [ -n "$wp" ] && [ "$p" != 1 ]; then
        extra+=$(awk -v a="$w1" -v b="$wp" -v p="$p" 'BEGIN {if (a > 0) printf "; work inflation %.2fx", p*b/a}')
      fi
    fi
    awk -v n="$name" -v p="$p" -v b="$best" -v o="$one" -v e="$extra" 'BEGIN {printf "| %s | %s | %.3f | %s | %s |\n", n, p, b, (o>0 ? sprintf("%.2f", o/b) : ""), e}'
  done
done

# The many-to-one master (issue 28's first target): requests per second at one master port,
# the three masters and the raw-socket server taking turns.
echo
echo "masterworker ($mw), tcp:"
echo
echo '```'
"$DIR/ibis-bench" masterworker -master explicit,upcall,concurrent $mw -q 2>&1 || echo "masterworker FAILED"
echo '```'
