#!/usr/bin/env bash
# A virtual cluster on this machine, for tests and benchmarks across hosts (root):
#   scripts/vcluster.sh up -hosts 4 [-rate 1gbit] [-slurm] [-cpus 8]
#   scripts/vcluster.sh exec h2 -- CMD ARGS...
#   scripts/vcluster.sh srun -- -n 4 ./app
#   scripts/vcluster.sh mpirun -np 4 -- ./app
#   scripts/vcluster.sh status
#   scripts/vcluster.sh down
# It builds internal/vcluster/cmd/vcluster and runs it; see docs/CLUSTERS.md.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${TMPDIR:-/tmp}/ibis-vcluster.$(id -u)"
(cd "$root" && go build -o "$bin" ./internal/vcluster/cmd/vcluster)
exec "$bin" "$@"
