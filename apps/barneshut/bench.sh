#!/usr/bin/env bash
# Speed of apps/barneshut on 1 and 2 processes over tcp, nio (and mp when mpirun and the MPI
# headers are there), and of the C baseline of its force computation (testdata/bh.c: tree
# build and walk only, on the initial bodies, STEPS times), in one run (docs/BARNESHUT.md).
#   apps/barneshut/bench.sh [BODIES] [STEPS] [ROUNDS]      defaults: 20000 3 3
# With PLOT=FILE.png it also draws the speedup plot (cmd/speedplot) of the Go runs.
# Each round runs every configuration once, in turn, so that the machine's noise spreads over
# all of them; the table gives the best and the median time of the rounds. Markdown on stdout.
set -euo pipefail
cd "$(dirname "$0")/../.."
BODIES=${1:-20000} STEPS=${2:-3} ROUNDS=${3:-3}
usage() { awk 'NR > 1 && /^#/ {sub(/^# ?/, ""); print; next} NR > 1 {exit}' "$0" >&2; exit 2; }
[ $# -le 3 ] || { echo "barneshut/bench.sh: at most three arguments" >&2; usage; }
for v in "$BODIES" "$STEPS" "$ROUNDS"; do
  [[ $v =~ ^[1-9][0-9]*$ ]] || {
    echo "barneshut/bench.sh: \"$v\" is not a count (1 or more)" >&2
    usage
  }
done
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

go build -o "$tmp/bh" ./apps/barneshut
gcc -O2 -ffp-contract=off -o "$tmp/bh-c" apps/barneshut/testdata/bh.c -lm
"$tmp/bh" -bodies "$BODIES" -steps 0 -q -out "$tmp/in.atos" >/dev/null
mpi=0
if command -v mpirun >/dev/null && go build -tags mpi -o "$tmp/bh-mpi" ./apps/barneshut 2>/dev/null; then mpi=1; fi
mpiflags=(--oversubscribe --bind-to core); [ "$(id -u)" -eq 0 ] && mpiflags+=(--allow-run-as-root)  # P <= 2: a core each, as -np binds

configs=("c 1"); for impl in tcp nio; do for p in 1 2; do configs+=("$impl $p"); done; done
[ $mpi -eq 1 ] && for p in 1 2; do configs+=("mp $p"); done

for r in $(seq "$ROUNDS"); do
  for cfg in "${configs[@]}"; do
    set -- $cfg
    case $1 in
      c)  line=$("$tmp/bh-c" "$tmp/in.atos" 0.5 8 0.025 "$STEPS" | sed 's/accsum=/checksum=/') ;;
      mp) line=$(mpirun -np "$2" "${mpiflags[@]}" "$tmp/bh-mpi" -impl mp -bodies "$BODIES" -steps "$STEPS" -q | grep '^barneshut-result') ;;
      *)  line=$("$tmp/bh" -np "$2" -impl "$1" -bodies "$BODIES" -steps "$STEPS" -q | grep '^barneshut-result') ;;
    esac
    secs=$(sed -n 's/.*seconds=\([0-9.]*\).*/\1/p' <<<"$line")
    ips=$(sed -n 's/.*ips=\([^ ]*\).*/\1/p' <<<"$line")
    sum=$(sed -n 's/.*checksum=\([^ ]*\).*/\1/p' <<<"$line")
    echo "$1 $2 $secs $ips $sum" >>"$tmp/results"
    echo "round $r: $1 P=$2 ${secs}s ips $ips checksum $sum" >&2
  done
done

echo "$BODIES bodies, $STEPS steps, $ROUNDS rounds; $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
echo
echo "| implementation | P | best s | median s | interactions/s (best) | speedup vs P=1 (best) | checksum |"
echo "|---|---|---|---|---|---|---|"
awk '
  { key = $1 " " $2; t[key] = t[key] " " $3; sum[key] = $5; if (!(key in seen)) { seen[key] = 1; order[++k] = key }
    if (!(key in ips) || $4 > ips[key]) ips[key] = $4 }
  END {
    for (i = 1; i <= k; i++) {
      key = order[i]; m = split(substr(t[key], 2), v, " ")
      for (a = 1; a <= m; a++) for (b = a + 1; b <= m; b++) if (v[b] < v[a]) { x = v[a]; v[a] = v[b]; v[b] = x }
      best[key] = v[1]; med[key] = (m % 2) ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
    }
    for (i = 1; i <= k; i++) {
      key = order[i]; split(key, f, " ")
      name = (f[1] == "c") ? "C tree build + walk, gcc -O2" : "barneshut -impl " f[1]
      printf "| %s | %d | %.3f | %.3f | %.3g | %.2f | %s |\n", name, f[2], best[key], med[key], ips[key], best[f[1] " 1"] / best[key], sum[key]
    }
    printf "\nGo (barneshut -impl tcp, P=1, whole steps) against C (build and walk): %.2fx of its interactions/s\n", ips["tcp 1"] / ips["c 1"]
    printf "(the C line'"'"'s checksum is its sum of the initial accelerations, not of final positions)\n"
  }' "$tmp/results"
if [ -n "${PLOT:-}" ]; then
  grep -v '^c ' "$tmp/results" | go run ./cmd/speedplot -o "$PLOT" -title "Barnes-Hut, $BODIES bodies, $STEPS steps: speedup on $(nproc) cores"
  echo; echo "speedup plot: $PLOT"
fi
