#!/usr/bin/env bash
# Speed of apps/sor against a C loop of the same kernel, in one run (docs/SOR.md).
#   [PLOT=FILE.png] apps/sor/bench.sh [N] [ITERS] [ROUNDS]      defaults: 2048 200 3
# Each round runs every configuration once, in turn, so that the machine's noise spreads over
# all of them; the table gives the best and the median time of the rounds. mp is included
# when mpirun and the MPI headers are there. Prints a Markdown table on stdout.
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-2048} ITERS=${2:-200} ROUNDS=${3:-3}
usage() { awk 'NR > 1 && /^#/ {sub(/^# ?/, ""); print; next} NR > 1 {exit}' "$0" >&2; exit 2; }
[ $# -le 3 ] || { echo "sor/bench.sh: at most three arguments" >&2; usage; }
for v in "$N" "$ITERS" "$ROUNDS"; do
  [[ $v =~ ^[1-9][0-9]*$ ]] || {
    echo "sor/bench.sh: \"$v\" is not a count (1 or more)" >&2
    usage
  }
done
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

go build -o "$tmp/sor" ./apps/sor
gcc -O2 -ffp-contract=off -o "$tmp/sor-c" apps/sor/testdata/sor.c -lm
mpi=0
if command -v mpirun >/dev/null && go build -tags mpi -o "$tmp/sor-mpi" ./apps/sor 2>/dev/null; then mpi=1; fi
mpiflags=(--oversubscribe); [ "$(id -u)" -eq 0 ] && mpiflags+=(--allow-run-as-root)
# mpirun binds each rank to a core when there are enough, and sor -np does the same; with
# more processes than cores neither binds (mpirun refuses to bind two ranks to one core).
mpibind() { if [ "$1" -le "$(nproc)" ]; then echo --bind-to core; else echo --bind-to none; fi; }

configs=("c 1" "c+wavefront 1") ; for impl in tcp nio; do for p in 1 2 4; do configs+=("$impl $p"); done; done
configs+=("tcp+async 2" "tcp+async 4" "nio+async 2" "nio+async 4")
[ $mpi -eq 1 ] && for p in 1 2 4; do configs+=("mp $p"); done

for r in $(seq "$ROUNDS"); do
  for cfg in "${configs[@]}"; do
    set -- $cfg
    case $1 in
      c)  line=$("$tmp/sor-c" "$N" "$ITERS") ;;
      c+wavefront) line=$("$tmp/sor-c" "$N" "$ITERS" wavefront) ;;
      mp) line=$(mpirun -np "$2" "${mpiflags[@]}" $(mpibind "$2") "$tmp/sor-mpi" -impl mp -n "$N" -iters "$ITERS" -q | grep '^sor-result') ;;
      *+async) line=$("$tmp/sor" -np "$2" -impl "${1%+async}" -async -n "$N" -iters "$ITERS" -q | grep '^sor-result') ;;
      *)  line=$("$tmp/sor" -np "$2" -impl "$1" -n "$N" -iters "$ITERS" -q | grep '^sor-result') ;;
    esac
    secs=$(sed -n 's/.*seconds=\([0-9.]*\).*/\1/p' <<<"$line")
    sum=$(sed -n 's/.*checksum=\([^ ]*\).*/\1/p' <<<"$line")
    echo "$1 $2 $secs $sum" >>"$tmp/results"
    echo "round $r: $1 P=$2 ${secs}s checksum $sum" >&2
  done
done

echo "N=$N, $ITERS iterations, $ROUNDS rounds; $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
echo
echo "| kernel / implementation | P | best s | median s | Mcell updates/s (best) | speedup vs P=1 (best) | checksum |"
echo "|---|---|---|---|---|---|---|"
awk -v n="$N" -v it="$ITERS" '
  { key = $1 " " $2; t[key] = t[key] " " $3; sum[key] = $4; if (!(key in seen)) { seen[key] = 1; order[++k] = key } }
  END {
    for (i = 1; i <= k; i++) {
      key = order[i]; m = split(substr(t[key], 2), v, " ")
      for (a = 1; a <= m; a++) for (b = a + 1; b <= m; b++) if (v[b] < v[a]) { x = v[a]; v[a] = v[b]; v[b] = x }
      best[key] = v[1]; med[key] = (m % 2) ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
    }
    for (i = 1; i <= k; i++) {
      key = order[i]; split(key, f, " ")
      name = (f[1] == "c") ? "C loop, gcc -O2, two sweeps" : (f[1] == "c+wavefront") ? "C loop, gcc -O2, wavefront" : "sor -impl " f[1]
      impl = f[1]; sub(/\+async/, "", impl); base = best[impl " 1"]
      printf "| %s | %d | %.3f | %.3f | %.1f | %.2f | %s |\n", name, f[2], best[key], med[key], n * n * it / best[key] / 1e6, base / best[key], sum[key]
    }
    printf "\nGo kernel (sor -impl tcp, P=1, wavefront) against the C loop in the same order: %.2fx of its speed; against C with two sweeps: %.2fx (best of each)\n", best["c+wavefront 1"] / best["tcp 1"], best["c 1"] / best["tcp 1"]
  }' "$tmp/results"

# With PLOT=FILE.png also the speedup plot (cmd/speedplot) of the runs; an async line starts
# from the same implementation's P=1 time (P=1 has no neighbours, so nothing to overlap).
if [ -n "${PLOT:-}" ]; then
  awk '$1 == "c" || $1 == "c+wavefront" { next } { print } $2 == 1 && ($1 == "tcp" || $1 == "nio") { print $1 "+async", $2, $3 }' "$tmp/results" |
    go run ./cmd/speedplot -o "$PLOT" -title "SOR ${N}x${N}, $ITERS iterations: speedup on $(nproc) cores"
  echo; echo "speedup plot: $PLOT"
fi
