/**
 * doctor's PII key line: does the key this configuration gives (BENEFITS_PII_KEY, else the key file
 * beside the snapshot) match the check value the snapshot records? A run under another key is
 * refused (exit 2), so doctor says it first, with the fix. And are the snapshot's versions all
 * under that key? An `ssn_token` cannot be checked against a key without the SSN it hides, so
 * each run records the check value of the key it tokenised with (store/pii/key-guard.ts, moved by a
 * rekey with the tokens): a version from a run that records another key's is named here. Read
 * only: no file is made or renamed.
 */
import BetterSqlite3 from "better-sqlite3";
import { existsSync } from "node:fs";
import { redact } from "../../errors.js";
import { piiKeyCheck, readPiiKeyCheck, snapshotIdOf } from "../../store/pii/pii-key-identity.js";
import { readKeyFile } from "../../store/pii/pii.js";
import { pendingKeyPath, sameCheck } from "../../store/pii/rekey-key-file.js";
import { StoredResources } from "../../store/schema/resources.js";

export interface PiiKeyLine {
  /** `mismatch` and `stale versions` fail doctor ({@link failsDoctor}); the others do not. */
  readonly result: "ok" | "mismatch" | "stale versions" | "not recorded" | "no snapshot" | "unreadable";
  readonly detail: string;
}

/** The PII key line for the snapshot at `db` under the configured key (if any). */
export function piiKeyLine(db: string, configured: string | undefined): PiiKeyLine {
  if (db === ":memory:" || !existsSync(db)) return { result: "no snapshot", detail: `no snapshot at ${db} yet` };
  let conn: BetterSqlite3.Database | undefined;
  try {
    conn = new BetterSqlite3(db, { readonly: true, fileMustExist: true });
    const stored = readPiiKeyCheck(conn);
    if (stored === undefined) return { result: "not recorded", detail: "the snapshot does not record its key yet: the next sync records this one's" };
    const id = snapshotIdOf(conn) ?? "";
    const matches = (key: Buffer) => sameCheck(piiKeyCheck(key, id), stored);
    const keyFile = `${db}.pii-key`;
    const pending = pendingKeyPath(db);
    if (!configured && existsSync(pending) && matches(readKeyFile(pending))) {
      return { result: "ok", detail: `${pending} holds the snapshot's key (a pii rekey stopped before renaming it): the next run renames it` };
    }
    const source = configured ? "BENEFITS_PII_KEY" : existsSync(keyFile) ? `the key file ${keyFile}` : undefined;
    if (source === undefined) return mismatch(db, `BENEFITS_PII_KEY is unset and ${keyFile} is missing`);
    if (matches(configured ? Buffer.from(configured, "utf8") : readKeyFile(keyFile))) return staleVersions(conn, stored) ?? { result: "ok", detail: `${source} is the key the snapshot was tokenised with` };
    return mismatch(db, `${source} is not the key the snapshot was tokenised with`);
  } catch (e) {
    return { result: "unreadable", detail: `the snapshot's key check could not be read: ${redact(e instanceof Error ? e.message : String(e))}` };
  } finally {
    conn?.close();
  }
}

/** Whether the line makes doctor fail. */
export function failsDoctor(line: PiiKeyLine | undefined): boolean {
  return line?.result === "mismatch" || line?.result === "stale versions";
}

/** The versions written by runs that record another key than the snapshot's; undefined when none (or runs record no key). */
function staleVersions(conn: BetterSqlite3.Database, stored: string): PiiKeyLine | undefined {
  const hasColumn = conn.prepare("SELECT 1 FROM pragma_table_info('_runs') WHERE name = 'pii_key_check'").get() !== undefined;
  if (!hasColumn) return undefined;
  const runs = (conn.prepare("SELECT run_id, pii_key_check FROM _runs WHERE pii_key_check IS NOT NULL").raw().all() as [number, string][])
    .filter(([, check]) => !sameCheck(check, stored))
    .map(([id]) => id);
  if (runs.length === 0) return undefined;
  const ids = JSON.stringify(runs);
  const per = StoredResources.map((r) => [r, conn.prepare(`SELECT COUNT(*) FROM _${r}_v WHERE valid_from_run IN (SELECT value FROM json_each(?))`).pluck().get(ids) as number] as const).filter(([, n]) => n > 0);
  if (per.length === 0) return undefined;
  const shown = runs.length > 5 ? `${runs.slice(0, 5).join(", ")}, …` : runs.join(", ");
  return {
    result: "stale versions",
    detail:
      `${per.map(([r, n]) => `${n} ${r} version${n === 1 ? "" : "s"}`).join(", ")} of run${runs.length === 1 ? "" : "s"} ${shown} ${per.length === 1 && per[0]![1] === 1 ? "was" : "were"} written under another PII key than the snapshot's: ` +
      "their ssn_token values join nothing under the snapshot's key (docs/pii-key.md, \"Every writer writes under the snapshot's key\")",
  };
}

function mismatch(db: string, what: string): PiiKeyLine {
  return {
    result: "mismatch",
    detail:
      `${what}: every sync will be refused. Restore that key (BENEFITS_PII_KEY, or the key file ${db}.pii-key), or change it on purpose: ` +
      "`benefits-sync pii rekey --old-key-env NAME` with the new key in BENEFITS_PII_KEY (docs/pii-key.md)",
  };
}

/** The line as doctor prints it under its table. */
export function renderPiiKeyLine(line: PiiKeyLine): string {
  return `PII key: ${line.result} (${line.detail}).\n`;
}
