/**
 * Every writer writes under the snapshot's key (issue 51), among the simulation's steps, from
 * streams of their own (labels 9500 and 9600, so every other draw of a seed is unchanged):
 *
 * - A re-keying beside the webhook worker: in a drawn third of the worker's drains without HTTP
 *   faults (a refetch failure in a refused drain is not counted, which would move the schedule's
 *   retries and parks), the snapshot's key check value is replaced by another key's, holding the
 *   write lock, while the worker's first refetch waits for its answer (an event, not a sleep: the
 *   refetch itself commits it). That is what a `pii rekey` commit changes as every writer sees it;
 *   the whole rekey (finding each token's digits) runs in
 *   test/integration/webhooks/rekey-beside-worker.test.ts: here it would cost some 10^7 HMAC tries
 *   a schedule, and the model's SSNs in free text need its `--exhaustive`. The drain must write nothing (`key-written-under-old`), its events stay pending; the check is put
 *   back after it, as a rekey back would. After every drain, no run may record another key than
 *   the snapshot's (`key-stale-version`: a version under another key).
 * - First commands started together on a new snapshot: in a drawn quarter of the schedules, two
 *   processes open a new snapshot beside the schedule's at the same moment with no configured key
 *   (what every command does first: create, migrate, the key file, its check), one of them with its
 *   key writes slowed (test/helpers/slow-key-write.cjs). Both must succeed with one key, the file
 *   whole, the check recorded its key's (`first-commands-key`).
 */
import BetterSqlite3 from "better-sqlite3";
import { execFile } from "node:child_process";
import { createHash, createHmac } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { ServiceClient } from "../../src/api/client.js";
import type { Violation } from "./invariants.js";
import { Rng } from "./rng.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const SLOW = join(HERE, "..", "helpers", "slow-key-write.cjs");
const BUILT_IDENTITY = pathToFileURL(join(HERE, "..", "..", "dist", "src", "store", "pii", "pii-key-identity.js")).href;
const OTHER_KEY = Buffer.from("sim-rekeyed-key-7f3e9a1c5b2d4e6f80");

const checkOf = (key: Buffer, snapshotId: string) => createHmac("sha256", key).update(`benefits-sync pii key check ${snapshotId}`).digest("hex");

/** The snapshot's recorded check (undefined: none) and its id. */
function readCheck(db: BetterSqlite3.Database): { check: string | undefined; id: string } {
  const get = (k: string) => db.prepare("SELECT value FROM _meta WHERE key = ?").pluck().get(k) as string | undefined;
  return { check: get("pii_key_check"), id: get("snapshot_id") ?? "" };
}

/** Runs that record another key than the snapshot's: their versions are under another key. */
export function staleKeyRuns(db: BetterSqlite3.Database): number[] {
  const { check } = readCheck(db);
  if (check === undefined) return [];
  return db.prepare("SELECT run_id FROM _runs WHERE pii_key_check IS NOT NULL AND pii_key_check <> ?").pluck().all(check) as number[];
}

/** The re-keyings beside the worker of one schedule. */
export class RekeysBesideWorker {
  private readonly rng: Rng;

  constructor(seed: number, private readonly path: string, private readonly stats: Record<string, number>) {
    this.rng = Rng.derive(seed, 9500);
  }

  /** For one drain: a source whose first refetch commits the other key's check first, or undefined (none this drain, or not `allowed`). */
  maybe(client: ServiceClient, allowed: boolean): DrainRekey | undefined {
    // Drawn whether allowed or not: the stream's draws do not depend on the drain's faults.
    return this.rng.chance(1 / 3) && allowed ? new DrainRekey(this.path, client, this.stats) : undefined;
  }
}

export class DrainRekey {
  /** The `_meta` row before the re-keying, put back after the drain; set once it committed. */
  private before: { check: string | undefined } | undefined;
  private rekeyedCheck = "";
  readonly source: Pick<ServiceClient, "memberText">;

  constructor(private readonly path: string, client: ServiceClient, private readonly stats: Record<string, number>) {
    this.source = {
      memberText: async (id, opts) => {
        if (!this.before) this.commit();
        return client.memberText(id, opts);
      },
    };
  }

  get happened(): boolean {
    return this.before !== undefined;
  }

  /** The other key's check replaces the snapshot's, under the write lock, as a rekey's commit does. */
  private commit(): void {
    const db = new BetterSqlite3(this.path);
    try {
      db.pragma("busy_timeout = 5000");
      db.transaction(() => {
        const { check, id } = readCheck(db);
        this.before = { check };
        this.rekeyedCheck = checkOf(OTHER_KEY, id);
        db.prepare("INSERT INTO _meta (key, value) VALUES ('pii_key_check', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(this.rekeyedCheck);
      }).immediate();
    } finally {
      db.close();
    }
    this.stats["rekeys beside the webhook worker"] = (this.stats["rekeys beside the webhook worker"] ?? 0) + 1;
  }

  /**
   * After the drain: it must have written nothing under the old key (no member applied, no run
   * recording a key other than the one committed); then the check is put back (a rekey back).
   */
  finish(what: string, report: { applied: number; runs: readonly { runId: number; members: number }[] }): Violation[] {
    const out: Violation[] = [];
    const db = new BetterSqlite3(this.path);
    try {
      db.pragma("busy_timeout = 5000");
      const runs = report.runs.map((r) => r.runId);
      const wrote = runs.length ? (db.prepare(`SELECT run_id FROM _runs WHERE run_id IN (${runs.map(() => "?").join(",")}) AND (pii_key_check IS NULL OR pii_key_check <> ?)`).pluck().all(...runs, this.rekeyedCheck) as number[]) : [];
      if (report.applied > 0 || wrote.length > 0) {
        out.push({ kind: "key-written-under-old", message: `${what}: the snapshot was re-keyed during the refetch, yet the worker applied ${report.applied} event(s)${wrote.length ? ` in runs ${wrote.join(", ")} under the old key` : ""}` });
      }
      db.transaction(() => {
        if (this.before!.check === undefined) db.prepare("DELETE FROM _meta WHERE key = 'pii_key_check'").run();
        else db.prepare("UPDATE _meta SET value = ? WHERE key = 'pii_key_check'").run(this.before!.check);
        // The rekey back moves every run to the key it restores, as `pii rekey` does.
        db.prepare("UPDATE _runs SET pii_key_check = ? WHERE pii_key_check = ?").run(this.before!.check ?? null, this.rekeyedCheck);
      }).immediate();
    } finally {
      db.close();
    }
    return out;
  }
}

/** Whether a schedule starts two commands together on a new snapshot: a quarter of them, from stream 9600. */
export function drawFirstCommands(seed: number): boolean {
  return Rng.derive(seed, 9600).chance(0.25);
}

/** One process opening the snapshot `db` as a command does first; prints the check of the key it got. */
function openAsCommand(db: string, slow: boolean): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const script = `const m = await import(${JSON.stringify(BUILT_IDENTITY)}); const r = m.resolveSnapshotPiiKey(process.argv[1], undefined); const c = await import("node:crypto"); process.stdout.write(c.createHash("sha256").update(r.key).digest("hex"));`;
  return new Promise((resolve) => {
    execFile(process.execPath, ["--input-type=module", "-e", script, db], { env: { PATH: process.env.PATH ?? "", ...(slow ? { NODE_OPTIONS: `--require ${SLOW}` } : {}) } }, (e, stdout, stderr) =>
      resolve({ code: e ? ((e as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** Two commands started together on a new snapshot at `db`, with no configured key. */
export async function firstCommandsTogether(seed: number, db: string, stats: Record<string, number>, trace: string[]): Promise<Violation[]> {
  const slowFirst = Rng.derive(seed, 9601).chance(0.5);
  const got = await Promise.all([openAsCommand(db, slowFirst), openAsCommand(db, !slowFirst)]);
  stats["first commands started together on a new snapshot"] = (stats["first commands started together on a new snapshot"] ?? 0) + 1;
  trace.push(`  (first commands) two processes opened a new snapshot together: exits ${got.map((g) => g.code).join(", ")}`);
  const out: Violation[] = [];
  const bad = got.filter((g) => g.code !== 0);
  // The error's own line (`NotASnapshotError: …`), not the first of node's report (where it was thrown).
  const why = (stderr: string) => stderr.split("\n").find((l) => /^[A-Za-z]*Error\b/.test(l)) ?? stderr.trim().split("\n")[0];
  if (bad.length) return [{ kind: "first-commands-key", message: `a command opening a new snapshot beside another failed: ${bad.map((g) => why(g.stderr)).join(" | ")}` }];
  const text = readFileSync(`${db}.pii-key`, "utf8");
  const key = Buffer.from(text.trim(), "hex");
  const fingerprint = createHash("sha256").update(key).digest("hex");
  if (!/^[0-9a-f]{64}\n$/.test(text) || (statSync(`${db}.pii-key`).mode & 0o777) !== 0o600) out.push({ kind: "first-commands-key", message: "the key file is not 64 hex characters and a newline, mode 0600" });
  if (got.some((g) => g.stdout !== fingerprint)) out.push({ kind: "first-commands-key", message: "the two commands went on with different keys, or not the key file's" });
  const conn = new BetterSqlite3(db, { readonly: true });
  try {
    const { check, id } = readCheck(conn);
    if (check !== checkOf(key, id)) out.push({ kind: "first-commands-key", message: "the snapshot records another key's check than its key file's" });
  } finally {
    conn.close();
  }
  return out;
}
