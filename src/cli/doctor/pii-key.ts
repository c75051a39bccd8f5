/**
 * doctor's PII key line: does the key this configuration gives (BENEFITS_PII_KEY, else the key file
 * beside the snapshot) match the check value the snapshot records? A run under another key is
 * refused (exit 2), so doctor says it first, with the fix. Read only: no file is made or renamed.
 */
import BetterSqlite3 from "better-sqlite3";
import { existsSync } from "node:fs";
import { redact } from "../../errors.js";
import { piiKeyCheck, readPiiKeyCheck, snapshotIdOf } from "../../store/pii-key-identity.js";
import { readKeyFile } from "../../store/pii.js";
import { pendingKeyPath, sameCheck } from "../../store/rekey-key-file.js";

export interface PiiKeyLine {
  /** `mismatch` fails doctor; the others do not. */
  readonly result: "ok" | "mismatch" | "not recorded" | "no snapshot" | "unreadable";
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
    if (matches(configured ? Buffer.from(configured, "utf8") : readKeyFile(keyFile))) return { result: "ok", detail: `${source} is the key the snapshot was tokenised with` };
    return mismatch(db, `${source} is not the key the snapshot was tokenised with`);
  } catch (e) {
    return { result: "unreadable", detail: `the snapshot's key check could not be read: ${redact(e instanceof Error ? e.message : String(e))}` };
  } finally {
    conn?.close();
  }
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
