/**
 * The sink test kit (`benefits-sync/testing`) run against every sink of ours, as a sink author
 * runs it against theirs: the CSV, JSONL and Parquet folders on a real temp dir, the Postgres
 * warehouse on a throwaway cluster (read back from its own `changes` view). There is no object
 * storage sink to run it against. The last test runs docs/sink-kit.md's example: the built kit,
 * from the package's export, in another test runner (node:test), as an installed package.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { StoredResources } from "../../../src/store/schema/resources.js";
import { folderSink, type FileFormatName } from "../../../src/sinks/files/folder-sink.js";
import { fileFormat } from "../../../src/sinks/files/formats.js";
import { readCompleteFolder } from "../../../src/sinks/files/manifest.js";
import { postgresSink } from "../../../src/sinks/postgres/postgres-sink.js";
import { sinkChecks, type HeldRun, type SinkSubject } from "../../../src/testing/index.js";
import { usePostgres } from "../../helpers/pg.js";
import { docPage, printedFile } from "../../helpers/readme-blocks.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** What a delivered folder holds: per run folder, the rows of its stored resources' files, by its manifest. */
function heldInFolders(dir: string): HeldRun[] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => /^\d+$/.test(n));
  } catch {
    return [];
  }
  return names.map((name) => {
    const m = readCompleteFolder(join(dir, name));
    // A run folder without a complete manifest holds part of a run at best.
    if (!m) return { runId: Number(name), changes: 0 };
    const rows = m.files.filter((f) => (StoredResources as readonly string[]).includes(f.file.replace(/\.[a-z]+$/, ""))).reduce((n, f) => n + f.rows, 0);
    return { runId: m.runId, changes: rows };
  });
}

function folderSubject(format: FileFormatName): SinkSubject {
  return {
    async create() {
      const dir = mkdtempSync(join(tmpdir(), `bsync-kit-${format}-`));
      dirs.push(dir);
      return folderSink(join(dir, "deltas"), await fileFormat(format));
    },
    held: (sink) => heldInFolders(sink.output.slice(sink.output.indexOf(":") + 1)),
  };
}

describe.each(["csv", "jsonl", "parquet"] as const)("the sink kit against the %s folder sink", (format) => {
  const subject = folderSubject(format);
  for (const check of sinkChecks) it(check.name, () => check.run(subject));
});

describe("the sink kit against the Postgres warehouse sink", () => {
  const pg = usePostgres();
  let n = 0;
  let database: string | undefined;
  const urls = new Map<string, string>();
  const subject: SinkSubject = {
    create() {
      const url = `${database}&schema=kit_${++n}`;
      const sink = postgresSink(url);
      urls.set(sink.output, url);
      return sink;
    },
    async held(sink) {
      const url = urls.get(sink.output)!;
      const schema = url.slice(url.lastIndexOf("=") + 1);
      const [made] = await pg.query<{ ok: boolean }>(url.replace(/&schema=.*$/, ""), "SELECT to_regclass($1) IS NOT NULL AS ok", [`${schema}.changes`]);
      if (!made?.ok) return [];
      const rows = await pg.query<{ run_id: string; n: string }>(url.replace(/&schema=.*$/, ""), `SELECT run_id, count(*) AS n FROM ${schema}.changes GROUP BY run_id`);
      return rows.map((r) => ({ runId: Number(r.run_id), changes: Number(r.n) }));
    },
  };
  for (const check of sinkChecks) {
    it(check.name, async (ctx) => {
      database ??= await pg.freshDatabase(ctx);
      await check.run(subject);
    });
  }
});

describe("the kit as a package export", () => {
  it("`benefits-sync/testing` runs under node:test, docs/sink-kit.md's example as printed, from the installed package, and imports no test runner", async () => {
    const built = join(ROOT, "dist", "src", "testing");
    for (const f of readdirSync(built).filter((f) => f.endsWith(".js"))) expect(readFileSync(join(built, f), "utf8"), f).not.toMatch(/(from|import\()\s*["'](vitest|@?jest|mocha|node:test)/);
    // An app that has the package installed: node_modules/benefits-sync is this repository.
    const app = mkdtempSync(join(tmpdir(), "bsync-kit-app-"));
    dirs.push(app);
    mkdirSync(join(app, "node_modules"));
    symlinkSync(ROOT, join(app, "node_modules", "benefits-sync"), "dir");
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "my-sink", type: "module", private: true }));
    // The example docs/sink-kit.md prints, as printed.
    writeFileSync(join(app, "my-sink.test.mjs"), printedFile(docPage("sink-kit.md"), "my-sink.test.mjs"));
    const out = await new Promise<{ code: number | null; text: string }>((resolve) => {
      // Bounded: a hang fails here, named, instead of holding the suite.
      const child = spawn(process.execPath, ["--test", "--test-reporter=tap", "my-sink.test.mjs"], { cwd: app, stdio: ["ignore", "pipe", "pipe"], timeout: 60_000 });
      let text = "";
      child.stdout.on("data", (d: Buffer) => (text += d.toString()));
      child.stderr.on("data", (d: Buffer) => (text += d.toString()));
      child.once("close", (code, signal) => resolve({ code, text: signal ? `${text}\n(node --test was stopped by ${signal} after 60 s: it did not finish)` : text }));
    });
    expect(out.code, out.text).toBe(0);
    for (const check of sinkChecks) expect(out.text).toMatch(new RegExp(`^ok \\d+ - ${check.name}$`, "m"));
    expect(out.text).toMatch(/^# pass 4$/m);
  });
});
