#!/usr/bin/env bash
# The reconciliation report's time and peak memory at a given size (not a ratio bench: reconcile has
# no bar; this shows that it grows linearly). Builds a snapshot from the sandbox in its own process:
# a first sync, DAYS simulated days, a second sync; then times `reconcile --from 1 --to 2` twice.
#
#   npm run build && bench/reconcile-size.sh 100000 && bench/reconcile-size.sh 400000
#
# Usage: bench/reconcile-size.sh MEMBERS [DAYS=7]. Works in a temp dir, removed at the end.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
members="${1:?usage: bench/reconcile-size.sh MEMBERS [DAYS]}"
days="${2:-7}"
groups=$(( members / 500 > 2 ? members / 500 : 2 ))
work="$(mktemp -d)"
sandbox_pid=""
cleanup() { [ -n "$sandbox_pid" ] && kill "$sandbox_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

node "$here/dist/src/sandbox/serve.js" --today 2026-01-15 --members "$members" --groups "$groups" --claims-per-member 3 > "$work/sandbox.json" &
sandbox_pid=$!
while [ ! -s "$work/sandbox.json" ]; do sleep 0.2; done
read -r url key today < <(node -e 'const j = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8").split("\n")[0]); console.log(j.baseUrl, j.keys.full, j.today)' "$work/sandbox.json")

sync() { node "$here/dist/bench/worker.js" sync "$url" "$key" 2000-01-01 2100-12-31 "$work/snapshot.db" | node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => { const r = JSON.parse(s); if (r.status !== "succeeded") { console.error(r.error); process.exit(1); } console.log(`  sync: ${(r.ms / 1000).toFixed(1)} s, ${r.inserted} inserted, ${r.updated} updated`); })'; }
echo "reconcile at $members members ($groups groups), $days simulated days between the runs"
sync
for _ in $(seq "$days"); do curl -sf -X POST "$url/_sandbox/advance" > /dev/null; done
sync
kill "$sandbox_pid"; sandbox_pid=""

for attempt in 1 2; do
  BENEFITS_DB="$work/snapshot.db" /usr/bin/time -f "%e %M" -o "$work/time" \
    node "$here/dist/src/cli/main.js" reconcile --from 1 --to 2 --out "$work/report" --as-of "$today" --json > "$work/report.json"
  read -r seconds kb < "$work/time"
  echo "  reconcile #$attempt: $seconds s, peak $(( kb / 1024 )) MB"
done
node -e 'const j = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").pop()); console.log(`  members ${j.members.from} -> ${j.members.to}; claims ${j.claims.to.count}; audit rows ${j.eligibility.audit}; arithmetic ${j.arithmeticHolds ? "holds" : "DOES NOT HOLD"}`)' "$work/report.json"
