/**
 * An A/B of the sync between two builds of benefits-sync on one sandbox, alternating (A, B, then
 * B, A), so that a regression can be told from the machine's noise:
 *
 *   node dist/bench/ab.js OLD_TREE NEW_TREE [MEMBERS] [GROUPS]
 *
 * Each tree is a checkout with `npm run build` done (for example `git worktree add /tmp/old
 * fe59c4f`, node_modules linked, built). Prints the fetch-only walk once, then per build and round
 * the first sync and the no-change re-sync (ms, peak RSS in MB). FIRST_ONLY=1 skips the re-syncs.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

const [oldTree, newTree, members = "100000", groups = "200"] = process.argv.slice(2);
if (!oldTree || !newTree) {
  process.stderr.write("usage: node dist/bench/ab.js OLD_TREE NEW_TREE [MEMBERS] [GROUPS]\n");
  process.exit(2);
}
const trees: Record<string, string> = { A: oldTree, B: newTree };
const window = ["2000-01-01", "2100-12-31"];
const sandbox = spawn(process.execPath, [join(newTree, "dist/src/sandbox/serve.js"), "--today", "2026-01-15", "--members", members, "--groups", groups, "--claims-per-member", "3"], {
  stdio: ["ignore", "pipe", "inherit"],
});
const info = JSON.parse(await new Promise<string>((r) => createInterface({ input: sandbox.stdout }).once("line", r))) as { baseUrl: string; keys: { full: string } };
const dir = mkdtempSync(join(tmpdir(), "bsync-ab-"));
const worker = (tree: string, args: string[]) => {
  const r = spawnSync(process.execPath, [join(tree, "dist/bench/worker.js"), ...args], { encoding: "utf8", maxBuffer: 1 << 24 });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout.trim().split("\n").pop()!) as { ms: number; maxRssMb: number };
};
try {
  const fetch = worker(newTree, ["fetch", info.baseUrl, info.keys.full, ...window]);
  console.log(`fetch-only walk: ${Math.round(fetch.ms)} ms`);
  for (const [round, order] of [[1, ["A", "B"]], [2, ["B", "A"]]] as const) {
    for (const t of order) {
      const db = join(dir, `${t}${round}.db`);
      const first = worker(trees[t]!, ["sync", info.baseUrl, info.keys.full, ...window, db]);
      const again = process.env.FIRST_ONLY ? undefined : worker(trees[t]!, ["sync", info.baseUrl, info.keys.full, ...window, db]);
      console.log(
        `${t} (${trees[t]}) round ${round}: first sync ${Math.round(first.ms)} ms, ${first.maxRssMb} MB` +
          (again ? `; re-sync ${Math.round(again.ms)} ms, ${again.maxRssMb} MB` : ""),
      );
    }
  }
} finally {
  sandbox.kill("SIGTERM");
  rmSync(dir, { recursive: true, force: true });
}
