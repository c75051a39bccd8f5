/**
 * One output, one layout, for a local folder and an S3 prefix alike (otherLayoutEntry,
 * src/sinks/files/table-layout.ts), with the built CLI against the sandbox and s3rver behind
 * test/helpers/s3-server.ts: run folders onto an output of tables, and tables onto an output of
 * run folders, by `sync` and by `export`, are refused the same way (exit 2, the same message
 * naming the output and what to do), with nothing written and no delivery recorded.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { startCli } from "../helpers/cli-process.js";
import { startS3Server, type S3TestServer } from "../helpers/s3-server.js";
import { ALL_CLAIMS } from "../helpers/sandbox-truth.js";

let sb: Sandbox;
let s3: S3TestServer;
let dir: string;
const window = ["--claims-since", ALL_CLAIMS.from, "--claims-until", ALL_CLAIMS.to];

beforeAll(async () => {
  sb = await startSandbox({ members: 30, groups: 2, seed: 53 });
  s3 = await startS3Server(["lake"]);
  dir = mkdtempSync(join(tmpdir(), "bsync-s3-layout-"));
});
afterAll(async () => {
  await sb?.close();
  await s3?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** An output of either kind: its --out value, what it holds now, and how a message names it. */
const outputs = {
  local: (cwd: string, name: string) => ({ out: join(cwd, name), where: join(cwd, name), holds: async () => (existsSync(join(cwd, name)) ? readdirSync(join(cwd, name)).sort() : []) }),
  s3: (_cwd: string, name: string) => ({ out: `s3://lake/${name}`, where: `s3://lake/${name}`, holds: async () => s3.keys("lake", `${name}/`) }),
};

describe("one output, one layout: a local folder and an S3 prefix refuse alike", () => {
  for (const kind of ["local", "s3"] as const) {
    it(`${kind}: sync of run folders onto tables, and export of tables onto run folders, exit 2 naming the output; nothing written, no delivery recorded`, async () => {
      const cwd = mkdtempSync(join(dir, `${kind}-`));
      const db = join(cwd, "snap.db");
      const env = { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: db, BENEFITS_PII_KEY: "s3-layout-test-pii-key-0123456789", ...s3.env };
      const cli = async (args: string[]) => {
        const r = await startCli(args, env, cwd).done;
        return { ...r, code: r.code ?? -1 };
      };
      const tables = outputs[kind](cwd, "tables");
      const folders = outputs[kind](cwd, "folders");
      await sb.advance();
      const first = await cli(["sync", ...window, "--out", tables.out, "--layout", "tables", "--quiet"]);
      expect(first.code, first.stderr).toBe(0);
      expect((await cli(["export", "--run", "1", "--out", folders.out, "--quiet"])).code).toBe(0);
      const held = { tables: await tables.holds(), folders: await folders.holds() };

      await sb.advance();
      const onTables = await cli(["sync", ...window, "--out", tables.out]);
      expect(onTables.code, onTables.stderr).toBe(2);
      expect(onTables.stderr).toContain(`${tables.where} holds tables (the table layout, _manifests/) (${tables.where}/_manifests), and run folders was asked for`);
      expect(onTables.stderr).toMatch(/Nothing was written\. Give each layout its own output \(another --out, or another sink\), or use --layout tables here/);
      const ledger = new Database(db, { readonly: true });
      try {
        expect(ledger.prepare("SELECT count(*) FROM _deliveries WHERE output = ?").pluck().get(`csv:${tables.where}`)).toBe(0);
      } finally {
        ledger.close();
      }

      const onFolders = await cli(["export", "--run", "1", "--out", folders.out, "--layout", "tables"]);
      expect(onFolders.code, onFolders.stderr).toBe(2);
      expect(onFolders.stderr).toContain(`${folders.where} holds run folders (the folder layout) (${folders.where}/00000001), and the table layout was asked for`);
      expect({ tables: await tables.holds(), folders: await folders.holds() }).toEqual(held);
    });
  }
});
