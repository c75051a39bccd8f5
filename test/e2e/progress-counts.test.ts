/**
 * The progress lines count what the summary counts: off a terminal, `sync` writes JSON lines to
 * stderr (a `progress` line per resource every few seconds, a `walked` line per resource at the
 * end), and the last count per resource is the summary's `seen`, on a first load and on a re-sync
 * whose pages the snapshot recognises by their bytes. Through the built CLI, against the sandbox.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { startCli } from "../helpers/cli-process.js";
import { ALL_CLAIMS } from "../helpers/sandbox-truth.js";

let sb: Sandbox;
let dir: string;

beforeAll(async () => {
  sb = await startSandbox({ members: 300, groups: 3, seed: 9 });
  dir = mkdtempSync(join(tmpdir(), "bsync-progress-"));
});
afterAll(async () => {
  await sb?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** One sync with progress on (stderr is not a terminal): the last progress count per resource, and the summary's `seen`. */
async function syncCounts(db: string): Promise<{ progress: Record<string, number>; seen: Record<string, number> }> {
  const env = { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: db, BENEFITS_PII_KEY: "progress-test-pii-key-0123456789" };
  const r = await startCli(["sync", "--json", "--claims-since", ALL_CLAIMS.from, "--claims-until", ALL_CLAIMS.to], env, dir).done;
  expect(r.code, r.stderr).toBe(0);
  const progress: Record<string, number> = {};
  for (const line of r.stderr.split("\n")) {
    if (!line.startsWith("{")) continue;
    const p = JSON.parse(line) as { event: string; resource: string; records: number };
    if (p.event === "progress" || p.event === "walked") progress[p.resource] = p.records;
  }
  const summary = JSON.parse(r.stdout.trim().split("\n").pop()!) as { resources: Record<string, { seen: number }> };
  const seen = Object.fromEntries(Object.keys(progress).map((res) => [res, summary.resources[res]?.seen ?? -1]));
  return { progress, seen };
}

describe("progress counts agree with the summary", () => {
  it("on a first load, and on a re-sync of an unchanged service", async () => {
    const db = join(dir, "snap.db");
    const first = await syncCounts(db);
    expect(Object.keys(first.progress).sort()).toEqual(["claims", "designs", "groups", "members"]);
    expect(first.seen.members).toBeGreaterThan(0);
    expect(first.progress).toEqual(first.seen);
    const again = await syncCounts(db);
    expect(again.seen.members).toBe(first.seen.members);
    expect(again.progress).toEqual(again.seen);
  });
});
