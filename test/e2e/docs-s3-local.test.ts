/**
 * docs/sinks.md's local S3 server, as printed: `npx s3rver …` started from a folder whose
 * `node_modules` is this clone's (as in a clone, where s3rver is a devDependency: nothing is
 * fetched), on a free port instead of the printed 4568 (the block's lines swapped to match, and
 * said so); then the page's second block in one shell, as a user pastes it (the built CLI on the
 * PATH, against the sandbox; the AWS CLI from the PATH: Debian's `awscli` in CI, .ci/run installs
 * it), and the page's DuckDB query as printed over the files the AWS CLI copied down, which must
 * be run 1's member changes as the snapshot recorded them. Never skipped: without s3rver or the
 * AWS CLI, it fails.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { DuckDBInstance } from "@duckdb/node-api";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { runDeltas } from "../../src/sinks/run-deltas.js";
import { installedEnv, startOnFreePort, swapPort } from "../helpers/printed-commands.js";
import { docPage, namedBlock } from "../helpers/readme-blocks.js";
import { EVENT_DEADLINE_MS } from "../helpers/wait.js";

const PAGE = docPage("sinks.md");
const NODE_MODULES = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "node_modules");

let sb: Sandbox;
let dir: string;
beforeAll(async () => {
  sb = await startSandbox({ members: 30, groups: 2, seed: 54 });
  dir = mkdtempSync(join(tmpdir(), "bsync-docs-s3-"));
});
afterAll(async () => {
  await sb?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A block of printed lines in one `sh -e`, without blocking this process (the sandbox answers from it). */
async function shell(lines: readonly string[], cwd: string, env: Record<string, string>): Promise<{ status: number | null; out: string }> {
  const child = spawn("sh", ["-e", "-c", lines.join("\n")], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (out += d.toString()));
  const timer = setTimeout(() => {
    out += `\n(killed: still running after ${EVENT_DEADLINE_MS} ms)`;
    child.kill("SIGKILL");
  }, EVENT_DEADLINE_MS);
  const status = await new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  clearTimeout(timer);
  return { status, out };
}

describe("docs/sinks.md's local S3 server, as printed", () => {
  it("s3rver started as printed (on a free port), a sync delivered to it, listed and copied down by the AWS CLI, and run 1's members read from the copy by DuckDB", async () => {
    const cwd = mkdtempSync(join(dir, "run-"));
    symlinkSync(NODE_MODULES, join(cwd, "node_modules"));
    const env = { ...installedEnv(dir), HOME: process.env.HOME ?? cwd, BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: join(cwd, "snap.db"), BENEFITS_PII_KEY: "docs-s3-test-pii-key-0123456789ab" };
    const server = namedBlock(PAGE, "s3: a local S3 server");
    expect(server).toHaveLength(1);
    const started = await startOnFreePort(server, 4568, cwd, env, "S3rver listening", { group: true });
    try {
      const { lines } = swapPort(namedBlock(PAGE, "s3: deliver to it and read it back"), 4568, started.port);
      await sb.advance();
      const r = await shell(lines, cwd, env);
      expect(r.status, `${started.says}\n${lines.join("\n")}\n${r.out}`).toBe(0);
      expect(r.out).toMatch(/ deltas\/_owner\.json\n/);
      expect(r.out).toMatch(/ deltas\/00000001\/manifest\.json\n/);
      expect(r.out).toMatch(/ deltas\/00000001\/members\.parquet\n/);
      expect(JSON.parse(readFileSync(join(cwd, "deltas", "00000001", "manifest.json"), "utf8")).runId).toBe(1);

      const sql = [...readFileSync(PAGE, "utf8").matchAll(/^```sql\n([\s\S]*?)^```$/gm)].map((m) => m[1]!).filter((b) => b.startsWith("-- duckdb: run 1's members, from the copy\n"));
      expect(sql).toHaveLength(1);
      const duck = await (await DuckDBInstance.create(":memory:")).connect();
      const db = new Database(join(cwd, "snap.db"), { readonly: true });
      try {
        await duck.run(`SET file_search_path = '${cwd.replace(/'/g, "''")}'`);
        const rows = (await duck.runAndReadAll(sql[0]!)).getRowObjectsJson();
        const want = [...runDeltas(db as never, "members", [1])].map((d) => `${d.op} ${d.id} ${String(d.data.lastName)} ${String(d.data.dateOfBirth)}`).sort();
        expect(rows.map((m) => `${String(m.op)} ${String(m.id)} ${String(m.lastName)} ${String(m.dateOfBirth)}`).sort()).toEqual(want);
        expect(rows.length).toBeGreaterThan(0);
      } finally {
        duck.closeSync();
        db.close();
      }
    } finally {
      await started.server.stop();
    }
  });
});
