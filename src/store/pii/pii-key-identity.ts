/**
 * Which PII key tokenised a snapshot. Every `ssn_token` (and the page fingerprints) depends on the
 * exact key: a run under another key would see every member with an SSN as updated and deliver
 * that to every sink. So the snapshot keeps a keyed check value of its key in `_meta` (never the
 * key), and a run whose key gives another check is refused (exit 2) before anything is written.
 *
 * The check is HMAC-SHA256(key, "benefits-sync pii key check " + snapshot_id), hex. Not scrypt: a
 * slow check would slow no one down, since the snapshot's own `ssn_token` values are already
 * HMAC-SHA256 under the same key of a few guessable digits; and the snapshot id in it means two
 * snapshots under one key do not show that they share it.
 */
import type { Database } from "better-sqlite3";
import { createHmac } from "node:crypto";
import { existsSync } from "node:fs";
import { ConfigError } from "../../errors.js";
import { openDatabase } from "../file/database.js";
import { asDiskFull } from "../file/disk-full.js";
import { loadOrCreatePiiKey } from "./pii.js";
import { completePendingKey, sameCheck } from "./rekey-key-file.js";

export const PII_KEY_CHECK_META = "pii_key_check";

/** The check value of `key` for the snapshot `snapshotId`. */
export function piiKeyCheck(key: Buffer, snapshotId: string): string {
  return createHmac("sha256", key).update(`benefits-sync pii key check ${snapshotId}`).digest("hex");
}

/** The check recorded in the snapshot, if any. */
export function readPiiKeyCheck(db: Database): string | undefined {
  return db.prepare("SELECT value FROM _meta WHERE key = ?").pluck().get(PII_KEY_CHECK_META) as string | undefined;
}

/** The run's PII key is not the one the snapshot was tokenised with. */
export class PiiKeyMismatchError extends ConfigError {
  override readonly code = "PII_KEY_MISMATCH";
  readonly path: string;
  constructor(dbPath: string, source: string) {
    super([
      `pii key: the snapshot ${dbPath} was tokenised with another PII key than this run's (${source}); ` +
        "every ssn_token would change and every member would look updated, so nothing was done. " +
        `Restore the key the snapshot was made with: set BENEFITS_PII_KEY to it, or put its key file back at ${dbPath}.pii-key (with BENEFITS_PII_KEY unset). ` +
        "If the change of key is deliberate, re-tokenise the snapshot under this run's key: `benefits-sync pii rekey --old-key-env NAME` " +
        `(NAME: the variable holding the old key; without it the old key is read from ${dbPath}.pii-key; docs/pii-key.md)`,
    ]);
    this.path = dbPath;
  }
}

/** `same`: the recorded key; `first`: recorded now on a snapshot without runs; `adopted`: recorded now on one with runs; `unchecked`: none recorded and not recording. */
export type PiiKeyOutcome = "same" | "first" | "adopted" | "unchecked";

export interface SnapshotPiiKey {
  readonly key: Buffer;
  readonly created: boolean;
  readonly path?: string;
  readonly outcome: PiiKeyOutcome;
}

/**
 * The PII key of the snapshot at `dbPath` (created and migrated if new), checked against the one
 * it records. With a check recorded and neither a configured key nor a key file, it refuses and
 * creates no key file. With `record` (default true) a snapshot without a check records this key's.
 *
 * @example
 * const { key } = resolveSnapshotPiiKey(config.db, config.piiKey, { record: !dryRun });
 */
export function resolveSnapshotPiiKey(dbPath: string, configured: string | undefined, opts: { record?: boolean } = {}): SnapshotPiiKey {
  const record = opts.record !== false;
  // Without recording (a dry run, a census) the snapshot is only read: not created, not migrated.
  if (!record && !existsSync(dbPath)) return { ...loadOrCreatePiiKey(dbPath, configured), outcome: "unchecked" };
  const db = record ? openDatabase(dbPath) : openDatabase(dbPath, { readonly: true });
  try {
    const keyFile = `${dbPath}.pii-key`;
    const stored = storedCheck(db);
    const id = snapshotIdOf(db);
    // A `pii rekey` that committed and stopped before renaming its new key file: finish it.
    completePendingKey(dbPath, (key) => piiKeyCheck(key, id ?? ""), stored);
    const source = configured ? "BENEFITS_PII_KEY" : existsSync(keyFile) ? `the key file ${keyFile}` : `none: BENEFITS_PII_KEY is unset and ${keyFile} is missing`;
    if (stored !== undefined && !configured && !existsSync(keyFile)) throw new PiiKeyMismatchError(dbPath, source);
    const pii = loadOrCreatePiiKey(dbPath, configured);
    const check = piiKeyCheck(pii.key, id ?? "");
    const compare = (found: string): PiiKeyOutcome => {
      if (sameCheck(found, check)) return "same";
      throw new PiiKeyMismatchError(dbPath, source);
    };
    let outcome: PiiKeyOutcome;
    if (stored !== undefined) outcome = compare(stored);
    else if (!record || id === undefined) outcome = "unchecked";
    else {
      // IMMEDIATE, and read again inside: two first runs racing must not both record. Recording is
      // opportunistic: while another run holds the writer (the webhook worker beside a sync), the
      // check is left for a later run to record, and this one goes on (its own claim decides). It
      // does not wait for the lock either: the webhook worker opens the snapshot on the thread that
      // answers deliveries, and a busy wait there stalls them (10 s, the busy timeout).
      db.pragma("busy_timeout = 0");
      try {
        outcome = db
          .transaction((): PiiKeyOutcome => {
            const raced = readPiiKeyCheck(db);
            if (raced !== undefined) return compare(raced);
            db.prepare("INSERT INTO _meta (key, value) VALUES (?, ?)").run(PII_KEY_CHECK_META, check);
            return db.prepare("SELECT 1 FROM _runs LIMIT 1").get() !== undefined ? "adopted" : "first";
          })
          .immediate();
      } catch (e) {
        if ((e as { code?: unknown }).code !== "SQLITE_BUSY") throw asDiskFull(e, dbPath);
        outcome = "unchecked";
      }
    }
    return { key: pii.key, created: pii.created, ...(pii.path ? { path: pii.path } : {}), outcome };
  } finally {
    db.close();
  }
}

/** The snapshot's id (part of its check value). */
export function snapshotIdOf(db: Database): string | undefined {
  return db.prepare("SELECT value FROM _meta WHERE key = 'snapshot_id'").pluck().get() as string | undefined;
}

/** The recorded check; none in a snapshot of a schema older than `_meta`. */
function storedCheck(db: Database): string | undefined {
  try {
    return readPiiKeyCheck(db);
  } catch {
    return undefined;
  }
}
