#!/usr/bin/env bash
# The thesis's testbed, emulated: the applications on a DAS-2-like grid of 4 sites, 10 ms
# one way and 100 Mbit/s between sites (root; docs/GRIDS.md, "Applications on an emulated
# DAS-2-like grid" and "Route table"):
#   [PLOT=docs/img/grid-latency.png] scripts/grid-bench.sh [ROUNDS]     (default 3 rounds)
# 1. SOR and Barnes-Hut with P = 4 and 8 processes on 1, 2 and 4 sites (ranks in blocks of
#    P/sites per site, on the site's hosts in turn): every checksum of an application must be
#    equal (the script fails otherwise); run time against one site.
# 2. dc (apps/uts -tree T1) with 16 processes, 4 per site, RS, CRS and TRS at 10 ms, and RS
#    and CRS at 1, 5, 10, 20 and 50 ms one way (`vcluster wan set`): run time, attempts per
#    steal, wide-area messages, idle time. The delay is on the packets (the grid's link
#    emulator), not dc's own held-back messages: IBIS_DC_WAN_DELAY is not set.
# 3. The same dc runs at 10 ms and SOR and Barnes-Hut (P = 8, 4 sites) on a grid whose site 2
#    is firewalled and site 3 NATed: the connections reversed and relayed, and the checksums
#    against those of 1.
# 4. A route table: fib (RS, -v) with 12 processes on 6 sites of 2 hosts (open, firewalled,
#    NAT, open, firewalled, NAT), over tcp and nio, once a round: the route every connection
#    took, from the processes' debug logs, by the kinds of the two sites.
# Each grid is built with the vcluster command (cluster id ivc-gridbench or
# $IBIS_VCLUSTER_ID; loss 0), with an ibis-registry and an ibis-hub on h1 (site 1); every
# process starts on its host with IBIS_REGISTRY, IBIS_POOL, IBIS_POOL_SIZE, IBIS_RANK,
# IBIS_SITE (its site, for dc's CRS) and IBIS_HUB. Each round runs every configuration once,
# in turn; the tables give medians of the rounds. Everything is removed on exit, also on
# Ctrl-C. With PLOT=FILE.png the plot of run time against latency (cmd/lineplot).
# Markdown on stdout, progress on stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "grid-bench: $ROUNDS: want a positive number of rounds" >&2; exit 2; }
SITES=4 HPS=4 DELAY=10ms RATE=100mbit
SOR_ARGS="-n 2048 -iters 30" BH_ARGS="-bodies 20000 -steps 3"
DC_NP=16 DC_ARGS="-tree T1" LATENCIES="1 5 10 20 50"
export IBIS_VCLUSTER_ID=${IBIS_VCLUSTER_ID:-ivc-gridbench}
# The caller's own IBIS_* settings (a pinned host, dc's emulated delay, a pool) would change
# what the runs measure: they get only what this script sets.
for v in $(compgen -e | grep '^IBIS_' | grep -vx 'IBIS_VCLUSTER_ID'); do unset "$v"; done
[ "$(id -u)" -eq 0 ] || { echo "grid-bench: needs root (it builds grids of network namespaces)" >&2; exit 1; }
for tool in jq ip tc iptables; do command -v $tool >/dev/null || { echo "grid-bench: $tool not found" >&2; exit 1; }; done

tmp=$(mktemp -d)
daemons=() running=() up=
cleanup() {
  for p in "${running[@]}" "${daemons[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${running[@]}" "${daemons[@]}"; do wait "$p" 2>/dev/null || true; done
  if [ -n "$up" ]; then "$tmp/vcluster" down >/dev/null 2>&1 || echo "grid-bench: '$tmp/vcluster down' failed: IBIS_VCLUSTER_ID=$IBIS_VCLUSTER_ID scripts/vcluster.sh down" >&2; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
fail() { echo "grid-bench: $*" >&2; exit 1; }
say() { echo "grid-bench: $*" >&2; }

start=$(date +%s)
say "building"
go build -o "$tmp/" ./internal/vcluster/cmd/vcluster ./apps/sor ./apps/barneshut ./apps/uts ./apps/fib \
  ./cmd/ibis-registry ./cmd/ibis-hub ./cmd/lineplot
vc=$tmp/vcluster
"$vc" status >/dev/null 2>&1 && fail "a cluster $IBIS_VCLUSTER_ID is up already: 'IBIS_VCLUSTER_ID=$IBIS_VCLUSTER_ID scripts/vcluster.sh down' it or set IBIS_VCLUSTER_ID"
load_start=$(cut -d' ' -f1-3 /proc/loadavg)

# grid_up FLAGS...: builds the grid and starts the registry and the hub on h1; sets
# registry, hub, kind (site number -> open, firewalled or NAT) and hps (hosts per site).
declare -A kind
grid_up() {
  "$vc" up "$@" >"$tmp/up.log" 2>&1 || { cat "$tmp/up.log" >&2; fail "vcluster up $* failed"; }
  up=1
  local h1 s line
  h1=$(awk '$1 == "h1" && $3 == "namespace" { print $2 }' "$tmp/up.log")
  [ -n "$h1" ] || { cat "$tmp/up.log" >&2; fail "no address of h1 in vcluster's status"; }
  kind=()
  while read -r line; do
    s=$(sed 's/^site s\([0-9]*\):.*/\1/' <<<"$line")
    case $line in *", firewall") kind[$s]=firewalled ;; *", NAT") kind[$s]=NAT ;; *) kind[$s]=open ;; esac
  done < <(grep '^site s' "$tmp/up.log")
  "$vc" exec h1 -- "$tmp/ibis-registry" -host "$h1" -port 8888 >"$tmp/registry.log" 2>&1 &
  daemons+=($!)
  "$vc" exec h1 -- "$tmp/ibis-hub" -listen "$h1:7700" >"$tmp/hub.log" 2>&1 &
  daemons+=($!)
  for _ in $(seq 300); do
    grep -q listening "$tmp/registry.log" && grep -q listening "$tmp/hub.log" && break
    sleep 0.1
  done
  grep -q listening "$tmp/registry.log" || { cat "$tmp/registry.log" >&2; fail "the registry on h1 did not start"; }
  grep -q listening "$tmp/hub.log" || { cat "$tmp/hub.log" >&2; fail "the hub on h1 did not start"; }
  registry=$h1:8888 hub=$h1:7700
}

# grid_down: stops the registry and the hub and removes the grid.
grid_down() {
  for p in "${daemons[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  daemons=()
  "$vc" down >/dev/null 2>&1 || fail "vcluster down failed"
  up=
}

# place P S: the hosts of P ranks on S sites: ranks in blocks of P/S per site, a block on
# its site's hosts in turn.
place() {
  local p=$1 s=$2 r per
  per=$((p / s))
  for r in $(seq 0 $((p - 1))); do echo -n "h$(((r / per) * hps + (r % per) % hps + 1)) "; done
}

# site HOST: the site of host hN.
site() { local n=${1#h}; echo $(((n - 1) / hps + 1)); }

# pool ID HOSTS PROGRAM ARGS...: rank r on the r-th of HOSTS, in a pool of its own; the
# output of rank r in $tmp/out.r, its log in $tmp/err.r; fails with them when one fails.
run=0
pool() {
  local hosts=($2) prog=$3 r p code=0 pids=()
  shift 3
  run=$((run + 1))
  rm -f "$tmp"/out.* "$tmp"/err.*
  for r in "${!hosts[@]}"; do
    "$vc" exec "${hosts[$r]}" -- env IBIS_REGISTRY="$registry" IBIS_POOL="grid-$run" IBIS_POOL_SIZE="${#hosts[@]}" \
      IBIS_RANK="$r" IBIS_SITE="s$(site "${hosts[$r]}")" IBIS_HUB="$hub" "$tmp/$prog" "$@" >"$tmp/out.$r" 2>"$tmp/err.$r" &
    pids+=($!)
  done
  running=("${pids[@]}")
  for p in "${pids[@]}"; do wait "$p" || code=$?; done
  running=()
  if [ "$code" -ne 0 ]; then
    for r in "${!hosts[@]}"; do echo "--- rank $r on ${hosts[$r]}:" >&2; cat "$tmp/out.$r" "$tmp/err.$r" >&2; done
    fail "$prog $* on ${hosts[*]} failed (exit $code)"
  fi
}

# app APP P S ROUND GRID: one SOR or Barnes-Hut run; appends to $tmp/apps.
app() {
  local a=$1 p=$2 s=$3 line secs sum args=$SOR_ARGS
  [ "$a" = barneshut ] && args=$BH_ARGS
  pool "$a-$p-$s" "$(place "$p" "$s")" "$a" $args -q -timeout 10m
  line=$(grep "^$a-result" "$tmp/out.0") || { cat "$tmp/out.0" >&2; fail "$a P=$p on $s site(s): no result"; }
  secs=$(sed -n 's/.*seconds=\([0-9.]*\).*/\1/p' <<<"$line")
  sum=$(sed -n 's/.*checksum=\([^ ]*\).*/\1/p' <<<"$line")
  [ -n "$secs" ] && [ -n "$sum" ] || fail "$a P=$p on $s site(s): no time or checksum in: $line"
  echo "$a $p $s $secs $sum $4 $5" >>"$tmp/apps"
  say "round $4 ($5): $a P=$p on $s site(s): ${secs}s checksum $sum"
}

# dcrun ALGO DELAY ROUND GRID: one uts run of DC_NP processes, DC_NP/SITES per site;
# appends seconds, attempts, steals, wide-area messages, idle s, connections, reversed,
# relayed to $tmp/dc.
dcrun() {
  local out
  pool "uts-$1" "$(place "$DC_NP" "$SITES")" uts $DC_ARGS -steal "$1" -json -progress 0 -timeout 10m
  out=$(cat "$tmp"/out.* | grep '^{') || fail "uts -steal $1: no process printed the result"
  jq -r --arg a "$1" --arg d "$2" --arg r "$3" --arg g "$4" '[$g, $a, $d, $r, .seconds, .statistics.total.steal_attempts,
    .statistics.total.steals, .statistics.total.wide_area_messages, .statistics.total.idle_ns / 1e9,
    .statistics.total.connections, .statistics.total.connections_reversed, .statistics.total.connections_relayed] | @tsv' <<<"$out" |
    tr '\t' ' ' >>"$tmp/dc"
  say "round $3 ($4): uts -steal $1, ${2} ms: $(tail -1 "$tmp/dc" | cut -d' ' -f5-)"
}

# setdelay MS: every site's one-way delay.
setdelay() {
  local s
  for s in $(seq "$SITES"); do "$vc" wan set "$s" "${1}ms" 0 >/dev/null || fail "wan set $s ${1}ms"; done
}

# 1 and 2: the open grid.
say "grid: $SITES sites of $HPS hosts, $DELAY one way, $RATE per site"
hps=$HPS
grid_up -sites "$SITES" -hosts-per-site "$HPS" -wan-delay "$DELAY" -wan-rate "$RATE"
"$vc" wancheck -n 20 -bytes 10000000 h1 "h$((HPS + 1))" >"$tmp/wancheck" || fail "wancheck failed"
cat "$tmp/wancheck" >&2
for round in $(seq "$ROUNDS"); do
  for a in sor barneshut; do
    for p in 4 8; do
      for s in 1 2 4; do app "$a" "$p" "$s" "$round" open; done
    done
  done
  for algo in rs crs trs; do dcrun "$algo" 10 "$round" open; done
done
for round in $(seq "$ROUNDS"); do
  for d in $LATENCIES; do
    setdelay "$d"
    for algo in rs crs; do dcrun "$algo" "$d" "$round" sweep; done
  done
done
grid_down

# 3: site 2 firewalled, site 3 NATed.
say "grid: the same, site 2 firewalled, site 3 NAT"
grid_up -sites "$SITES" -hosts-per-site "$HPS" -wan-delay "$DELAY" -wan-rate "$RATE" -firewall 2 -nat 3
for round in $(seq "$ROUNDS"); do
  for algo in rs crs trs; do dcrun "$algo" 10 "$round" closed; done
  for a in sor barneshut; do app "$a" 8 4 "$round" closed; done
done
grid_down

# 4: the route table, from the debug log of every connection a send port made.
say "grid: 6 sites of 2 hosts, sites 2 and 5 firewalled, 3 and 6 NAT"
hps=2
grid_up -sites 6 -hosts-per-site 2 -wan-delay "$DELAY" -wan-rate "$RATE" -firewall 2,5 -nat 3,6
for round in $(seq "$ROUNDS"); do
  for impl in tcp nio; do
    pool "routes-$impl" "$(for h in $(seq 12); do echo -n "h$h "; done)" fib -impl "$impl" -n 42 -threshold 16 -steal rs -v -progress 0 -timeout 5m
    for f in "$tmp"/err.*; do
      # Each connection's "connected" line, preceded by one that names its route where it
      # took another than a direct dial: "SRC-IP PEER-IP ROUTE".
      grep -P '\t(connected|connected by another route than a direct dial)\t' "$f" | awk -F'\t' '{ print $NF }' |
        jq -r 'if .route then "R \(.ibis | capture("@(?<ip>[0-9.]+):").ip) \(.peer | capture("@(?<ip>[0-9.]+):").ip) \(.route | split(" ")[0])"
               else "C \(.ibis | capture("@(?<ip>[0-9.]+):").ip) \(.to | capture("@(?<ip>[0-9.]+):").ip)" end' |
        awk -v impl="$impl" '$1 == "R" { pending[$3] = $4; next } { r = ($3 in pending) ? pending[$3] : "direct"; delete pending[$3]; print impl, $2, $3, r }'
    done >>"$tmp/routes"
    say "round $round: route probe over $impl: $(grep -c "^$impl " "$tmp/routes") connections so far"
  done
done
grid_down

# The checksums: one per application, whatever the layout or the grid.
bad=$(awk '{ if (!($1 in sum)) sum[$1] = $5; else if (sum[$1] != $5) print $1 " P=" $2 " on " $3 " site(s), " $7 " grid: checksum " $5 ", other runs " sum[$1] }' "$tmp/apps")
[ -z "$bad" ] || fail "results differ between layouts:
$bad"

median='function median(list,   v, m, a, b, x) {
    m = split(substr(list, 2), v, " ")
    for (a = 1; a <= m; a++) for (b = a + 1; b <= m; b++) if (v[b] + 0 < v[a] + 0) { x = v[a]; v[a] = v[b]; v[b] = x }
    return (m % 2) ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
  }'
echo "Emulated grid: $SITES sites of $HPS hosts, $DELAY one way and $RATE per site between sites (loss 0), registry and hub on h1;"
echo "$(nproc) cores (shared); load average $load_start at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end; $ROUNDS rounds, medians."
echo
echo "wancheck (h1 to h$((HPS + 1))): $(tr '\n' ';' <"$tmp/wancheck" | sed 's/;$//; s/;/; /g')"
echo
echo "SOR ($SOR_ARGS) and Barnes-Hut ($BH_ARGS), same P on 1, 2 and 4 sites:"
echo
echo "| application | P | sites | median s | against 1 site | median of the rounds' ratios | runs | checksum |"
echo "|---|---:|---:|---:|---:|---:|---:|---|"
awk "$median"'
  $7 == "open" { k = $1 " " $2 " " $3; t[k] = t[k] " " $4; at[k " " $6] = $4; sum[$1] = $5; n[k]++
    if (!(k in seen)) { seen[k] = 1; order[++c] = k } }
  END {
    for (i = 1; i <= c; i++) {
      split(order[i], f, " "); one = f[1] " " f[2] " 1"; r = ""
      for (k in at) { split(k, g, " "); if (g[1] " " g[2] " " g[3] == order[i] && (one " " g[4]) in at) r = r " " at[k] / at[one " " g[4]] }
      printf "| %s | %d | %d | %.3f | %.2f | %.2f | %d | %s |\n", f[1], f[2], f[3], median(t[order[i]]), median(t[order[i]]) / median(t[one]), median(r), n[order[i]], sum[f[1]]
    }
  }' "$tmp/apps"
echo
echo "dc: uts $DC_ARGS, $DC_NP processes, $((DC_NP / SITES)) per site (grid: open; closed = site 2 firewalled, site 3 NAT; sweep = the latency sweep):"
echo
echo "| grid | algorithm | one-way ms | median s | att/steal (all rounds) | wide-area messages | idle s (all processes) | connections | reversed | relayed | runs |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
awk "$median"'
  { k = $1 " " $2 " " $3; s[k] = s[k] " " $5; att[k] += $6; st[k] += $7; w[k] = w[k] " " $8; idle[k] = idle[k] " " $9
    c[k] = c[k] " " $10; rv[k] = rv[k] " " $11; rl[k] = rl[k] " " $12; n[k]++
    if (!(k in seen)) { seen[k] = 1; order[++m] = k } }
  END {
    for (i = 1; i <= m; i++) {
      k = order[i]; split(k, f, " ")
      printf "| %s | %s | %d | %.3f | %s | %d | %.2f | %d | %d | %d | %d |\n", f[1], f[2], f[3], median(s[k]),
        st[k] ? sprintf("%.2f", att[k] / st[k]) : "no steal", median(w[k]),
        median(idle[k]), median(c[k]), median(rv[k]), median(rl[k]), n[k]
    }
  }' "$tmp/dc"
echo
echo "Run time against one-way latency, median of $ROUNDS (CRS/RS: the median of the rounds' ratios):"
echo
echo "| one-way ms | RS s | CRS s | CRS/RS |"
echo "|---:|---:|---:|---:|"
awk "$median"'
  $1 == "sweep" { t[$3 " " $2] = t[$3 " " $2] " " $5; at[$3 " " $2 " " $4] = $5; if (!($3 in seen)) { seen[$3] = 1; d[++m] = $3 } }
  END {
    for (i = 1; i <= m; i++) {
      r = ""
      for (k in at) { split(k, g, " "); if (g[1] == d[i] && g[2] == "crs" && (d[i] " rs " g[3]) in at) r = r " " at[k] / at[d[i] " rs " g[3]] }
      printf "| %d | %.3f | %.3f | %.2f |\n", d[i], median(t[d[i] " rs"]), median(t[d[i] " crs"]), median(r)
    }
  }' "$tmp/dc"
echo
echo "SOR and Barnes-Hut with P=8 on 4 sites, site 2 firewalled and site 3 NAT (checksums equal to the open grid's, checked):"
echo
echo "| application | median s | open grid median s | closed/open | runs |"
echo "|---|---:|---:|---:|---:|"
awk "$median"'
  $2 == 8 && $3 == 4 { t[$1 " " $7] = t[$1 " " $7] " " $4; n[$1 " " $7]++; if (!($1 in seen)) { seen[$1] = 1; a[++m] = $1 } }
  END { for (i = 1; i <= m; i++) printf "| %s | %.3f | %.3f | %.2f | %d |\n", a[i], median(t[a[i] " closed"]), median(t[a[i] " open"]),
    median(t[a[i] " closed"]) / median(t[a[i] " open"]), n[a[i] " closed"] }' "$tmp/apps"
echo
echo "Route table: every connection of fib -steal rs on 12 processes, 6 sites of 2 hosts (1 open, 2 firewalled, 3 NAT, 4 open,"
echo "5 firewalled, 6 NAT), $ROUNDS runs each, by the kinds of the sending and the receiving site: routes taken (connections):"
echo
echo "| from | to | tcp | nio |"
echo "|---|---|---|---|"
kinds=$(for s in "${!kind[@]}"; do echo -n "$s=${kind[$s]} "; done)
awk -v kinds="$kinds" '
  function site(ip,   o) { split(ip, o, "."); return o[3] }
  BEGIN { n = split(kinds, kv, " "); for (i = 1; i <= n; i++) { split(kv[i], x, "="); kind[x[1]] = x[2] } }
  { a = site($2); b = site($3); from = kind[a]; to = (a == b) ? "its own site" : kind[b]; k = from "|" to
    cnt[k "|" $1 "|" $4]++; if (!(k in seen)) { seen[k] = 1; keys[++m] = k } }
  END {
    for (i = 1; i <= m; i++) {
      split(keys[i], f, "|"); line = "| " f[1] " | " f[2]
      for (j = 1; j <= 2; j++) {
        impl = (j == 1) ? "tcp" : "nio"; cell = ""
        split("direct reverse relay", rs, " ")
        for (q = 1; q <= 3; q++) if ((keys[i] "|" impl "|" rs[q]) in cnt) cell = cell (cell == "" ? "" : ", ") rs[q] " (" cnt[keys[i] "|" impl "|" rs[q]] ")"
        line = line " | " (cell == "" ? "none made" : cell)
      }
      print line " |"
    }
  }' "$tmp/routes" | sort
echo
echo "Wall time of the script: $(($(date +%s) - start)) s"

if [ -n "${PLOT:-}" ]; then
  awk '$1 == "sweep" { print toupper($2), $3, $5 }' "$tmp/dc" |
    "$tmp/lineplot" -o "$PLOT" -title "uts T1, $DC_NP processes on $SITES sites ($RATE per site): median of $ROUNDS" \
      -x "one-way wide-area latency (ms)" -y "run time (s)"
  echo
  echo "plot: $PLOT"
fi
