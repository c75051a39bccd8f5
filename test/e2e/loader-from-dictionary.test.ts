/**
 * A loader written from the data dictionary alone (docs/outputs.md): it imports nothing of the
 * project, only Node. It reads a calendar month of nightly folders (March: 31 nights) that the
 * CLI delivered from the sandbox (`sync --out`, the sandbox advanced a day between nights; the
 * CLI run in this process: 31 started processes took 93 to 120 s with two other suites beside it,
 * this test's whole deadline), in text sort order, refuses a layout it does not know, checks every file against its manifest, and
 * applies each `claims.csv` row by `op`. The table it rebuilds equals the snapshot's `claims`
 * view.
 */
import Database from "better-sqlite3";
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.js";
import { runCli } from "../unit/cli/run-cli.js";
import { ALL_CLAIMS } from "../helpers/sandbox-truth.js";

// ---- The loader: nothing below until the test uses the project's code. ----

/** The layouts this loader was written for (docs/outputs.md: "layout version 2"). */
const KNOWN_LAYOUTS = [2];
/** claims.csv's documented columns, as the dictionary lists them, and their SQL names (dots become underscores). */
const CLAIM_COLUMNS = [
  "claimNumber", "memberId", "coverageId", "groupId", "planId", "serviceDateFrom", "serviceDateTo", "claimStatus", "claimAmount",
  "allowedAmount", "paidAmount", "processing.receivedDate", "processing.adjudicatedDate", "processing.paidDate", "processing.denialReason", "createdAt",
];

/** RFC 4180: quoted fields may hold commas, doubled quotes and line breaks; records end with CRLF. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') (field += '"'), i++;
      else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ",") row.push(field), (field = "");
    else if (ch === "\r" && text[i + 1] === "\n") {
      row.push(field), rows.push(row), (row = []), (field = ""), i++;
    } else field += ch;
  }
  if (field !== "" || row.length) row.push(field), rows.push(row);
  return rows;
}

interface Loaded {
  readonly runs: number[];
  readonly claims: Map<string, Record<string, string | null>>;
}

function load(root: string): Loaded {
  const claims = new Map<string, Record<string, string | null>>();
  const runs: number[] = [];
  const folders = readdirSync(root).filter((n) => /^\d{8}$/.test(n)).sort();
  for (const name of folders) {
    const dir = join(root, name);
    const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as { runId: number; layoutVersion?: number; format: string; files: { file: string; sha256: string; rows: number }[] };
    if (!KNOWN_LAYOUTS.includes(manifest.layoutVersion ?? 1)) throw new Error(`${dir}: layout ${manifest.layoutVersion ?? 1} is not one this loader knows`);
    if (manifest.format !== "csv") throw new Error(`${dir}: not CSV`);
    for (const f of manifest.files) {
      const sum = createHash("sha256").update(readFileSync(join(dir, f.file))).digest("hex");
      if (sum !== f.sha256) throw new Error(`${dir}/${f.file}: does not match its manifest`);
    }
    runs.push(manifest.runId);
    const [header, ...records] = parseCsv(readFileSync(join(dir, "claims.csv"), "utf8"));
    const at = (col: string) => header!.indexOf(col);
    if (records.length !== manifest.files.find((f) => f.file === "claims.csv")!.rows) throw new Error(`${dir}/claims.csv: row count`);
    for (const r of records) {
      const id = r[at("id")]!;
      if (r[at("op")] === "delete") {
        claims.delete(id);
        continue;
      }
      // An empty cell is an absent value.
      claims.set(id, Object.fromEntries(CLAIM_COLUMNS.map((c) => [c.replace(/\./g, "_"), r[at(c)] === "" ? null : r[at(c)]!])));
    }
  }
  return { runs, claims };
}

// ---- The test. ----

/** A calendar month of nights: the first on March 1, the last on March 31. */
const MONTH = "2026-03";
const NIGHTS = 31;
let sb: Sandbox;
let dir: string;

beforeAll(async () => {
  sb = await startSandbox({ members: 60, groups: 2, seed: 24, today: `${MONTH}-01` });
  dir = mkdtempSync(join(tmpdir(), "bsync-loader-"));
});
afterAll(async () => {
  await sb?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("a loader written from the dictionary alone", () => {
  it(`reads a month's ${NIGHTS} nightly folders in text order and rebuilds the current claims table: it equals the snapshot's claims view`, async () => {
    const env = { BENEFITS_BASE_URL: sb.baseUrl, BENEFITS_API_KEY: sb.keys.full, BENEFITS_DB: join(dir, "snap.db"), BENEFITS_PII_KEY: "loader-test-pii-key-0123456789abcdef" };
    const nights: string[] = [];
    for (let night = 0; night < NIGHTS; night++) {
      if (night > 0) await sb.advance();
      nights.push(sb.today);
      const r = await runCli(["sync", "--resources", "groups,claims", "--claims-since", ALL_CLAIMS.from, "--claims-until", ALL_CLAIMS.to, "--out", "claims-deltas", "--json", "--quiet"], { env, cwd: dir });
      expect(r.code, r.stderr).toBe(0);
    }
    // Every day of the month, once.
    expect(nights).toEqual(Array.from({ length: NIGHTS }, (_, i) => `${MONTH}-${String(i + 1).padStart(2, "0")}`));
    const loaded = load(join(dir, "claims-deltas"));
    // Text order is run order, past run 9.
    expect(loaded.runs).toEqual(Array.from({ length: NIGHTS }, (_, i) => i + 1));

    const db = new Database(join(dir, "snap.db"), { readonly: true });
    try {
      const cols = CLAIM_COLUMNS.map((c) => `CAST("${c.replace(/\./g, "_")}" AS TEXT) AS "${c.replace(/\./g, "_")}"`).join(", ");
      const view = db.prepare(`SELECT id, ${cols} FROM claims ORDER BY id`).all() as ({ id: string } & Record<string, string | null>)[];
      expect(view.length).toBeGreaterThan(0);
      // The nights changed claims (updates and new ones), so the folders after the first carry rows.
      const changed = db.prepare("SELECT COUNT(*) FROM changes WHERE resource = 'claims' AND run_id > 1").pluck().get() as number;
      expect(changed).toBeGreaterThan(0);
      const rebuilt = [...loaded.claims.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([id, row]) => ({ id, ...row }));
      expect(rebuilt).toEqual(view);
    } finally {
      db.close();
    }
    // 31 syncs (68 s measured at load 12): a deadline of its own, still well under the suite's.
  }, 240_000);
});
