#!/usr/bin/env bash
# A virtual cluster on this machine, for tests and benchmarks across hosts (root):
#   scripts/vcluster.sh up -hosts 4 [-rate 1gbit] [-slurm] [-cpus 8]
#   scripts/vcluster.sh up -sites 4 -hosts-per-site 4 -wan-delay 10ms -wan-rate 100mbit \
#       [-wan-loss 0.1%] [-firewall 2] [-nat 3]
#   scripts/vcluster.sh wan down|up SITE; wan set SITE DELAY LOSS; wan stats
#   scripts/vcluster.sh wancheck h1 h5
#   scripts/vcluster.sh exec h2 -- CMD ARGS...
#   scripts/vcluster.sh srun -- -n 4 ./app
#   scripts/vcluster.sh mpirun -np 4 -- ./app
#   scripts/vcluster.sh status
#   scripts/vcluster.sh down
# It builds internal/vcluster/cmd/vcluster and runs it; see docs/CLUSTERS.md and docs/GRIDS.md.
# The tool stays at ${TMPDIR:-/tmp}/ibis-vcluster.UID, where the cluster's daemons run it from.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${TMPDIR:-/tmp}/ibis-vcluster.$(id -u)"
(cd "$root" && go build -o "$bin" ./internal/vcluster/cmd/vcluster)
exec "$bin" "$@"
