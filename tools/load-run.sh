#!/usr/bin/env bash
# npm test three times in a row with two other suites running beside it (issue 42).
#
#   bash tools/load-run.sh [BASE]        BASE defaults to a new folder under /tmp
#
# Clones the current commit three times under BASE (A, B, C), each with ../shared beside it when
# this checkout has one, and node_modules linked from this checkout (run `npm ci` here first).
# A runs the whole suite (`npx vitest run`, what `npm test` runs) three times in a row; B and C
# run it in a loop until A is done. /proc/loadavg is sampled each minute. At the end it prints,
# for each run, its passed and failed counts from vitest's JSON report, and the load range, then
# exits 0 only when A's three runs and every finished run of B and C passed. B's and C's runs still
# going when A is done are stopped (with the PostgreSQL clusters they started: each suite has its
# own TMPDIR under BASE, and the file systems its disk-full tests mounted there are unmounted) and
# reported as stopped, not counted.
# LOAD_RUN_FILES (optional): test files to run instead of the whole suite, to try the script quickly.
# On this 2-core machine each run takes 20 to 25 minutes at load 8 to 10: about 75 minutes in all.
set -u
here="$(cd "$(dirname "$0")/.." && pwd)"
base="${1:-$(mktemp -d /tmp/load-run.XXXXXX)}"
mkdir -p "$base"
commit="$(git -C "$here" rev-parse HEAD)"
echo "load-run: commit $commit, folders under $base"
if [ ! -d "$here/node_modules" ]; then
  echo "load-run: $here/node_modules is missing: run npm ci in $here first" >&2
  exit 2
fi
for x in A B C; do
  rm -rf "$base/$x"
  mkdir -p "$base/$x"
  git clone -q "$here" "$base/$x/repo" && git -C "$base/$x/repo" checkout -q "$commit"
  [ -d "$here/../shared" ] && cp -r "$here/../shared" "$base/$x/shared"
  ln -s "$here/node_modules" "$base/$x/repo/node_modules"
  mkdir -p "$base/$x/tmp" && chmod 1777 "$base/$x/tmp" && chmod 755 "$base" "$base/$x"
done

count() { # passed failed of one JSON report
  node -e 'const r=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));console.log(r.numPassedTests+" passed, "+r.numFailedTests+" failed")' "$1" 2>/dev/null || echo "no report"
}
one() { # suite run-number
  local dir="$base/$1/repo" n="$2" t0 rc
  t0=$(date +%s)
  (cd "$dir" && TMPDIR="$base/$1/tmp" exec setsid npx vitest run --reporter=json --outputFile="$base/$1/run$n.json" ${LOAD_RUN_FILES:-} >"$base/$1/run$n.log" 2>&1) &
  echo $! >"$base/$1/pid"
  wait $!
  rc=$?
  if [ "$1" != A ] && [ -e "$base/A.done" ] && [ "$rc" -ge 128 ]; then
    echo "$1 run $n: stopped when A was done, $(( $(date +%s) - t0 )) s in" | tee -a "$base/stopped.txt"
    return 0
  fi
  echo "$1 run $n: exit $rc, $(( $(date +%s) - t0 )) s, $(count "$base/$1/run$n.json"), $(cut -d' ' -f1-3 /proc/loadavg) at the end" | tee -a "$base/summary.txt"
  return $rc
}

: >"$base/summary.txt"
( while [ ! -e "$base/A.done" ]; do echo "$(date +%T) $(cut -d' ' -f1-3 /proc/loadavg)" >>"$base/load.txt"; sleep 60; done ) &
sampler=$!
loop() { local n=1; while [ ! -e "$base/A.done" ]; do one "$1" "$n"; n=$((n + 1)); done; }
loop B & pb=$!
sleep 20
loop C & pc=$!
sleep 20
a_ok=0
for n in 1 2 3; do one A "$n" || a_ok=1; done
touch "$base/A.done"
for x in B C; do kill -TERM -- "-$(cat "$base/$x/pid")" 2>/dev/null; done
wait "$pb" "$pc" "$sampler"
for x in B C; do # clusters started by the stopped runs (pg_ctl puts them in their own session)
  for pid in "$base"/$x/tmp/bsync-pg-*/data/postmaster.pid; do
    [ -e "$pid" ] && kill -QUIT "$(head -1 "$pid")" 2>/dev/null
  done
done
sleep 2
# The disk-full tests mount small file systems in their temp folder; a stopped run leaves them.
grep -o " $base/[^ ]*" /proc/mounts | xargs -r -n1 umount -l 2>/dev/null
rm -rf "$base"/[ABC]/tmp/*

echo "---"
cat "$base/summary.txt"
[ -e "$base/stopped.txt" ] && cat "$base/stopped.txt"
echo "load average (1 min) while A ran: $(awk '{print $2}' "$base/load.txt" | sort -n | sed -n '1p;$p' | paste -sd' ' | sed 's/ / to /')"
bad=$(grep -c -v 'exit 0' "$base/summary.txt")
if [ "$a_ok" = 0 ] && [ "$bad" = 0 ]; then echo "load-run: A passed three times in a row beside B and C"; exit 0; fi
echo "load-run: $bad run(s) failed: see $base/*/run*.log"
exit 1
