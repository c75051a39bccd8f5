/**
 * Every writer writes under the snapshot's key (issue 51). A command resolves its PII key when it
 * opens the snapshot (pii-key-identity.ts), but it may write much later: the webhook worker
 * resolves it once per drain and refetches members outside the lease, so a `pii rekey` that
 * committed meanwhile (it records no run) left it writing versions under the old key, each a false
 * `ssn_token` change delivered to every sink. So the key is checked again here, the one place,
 * under the write lock at the moment of writing: when a run claims the snapshot (a sync, the
 * worker's batch, any run) and when each group of its pages opens its transaction. A run records
 * the check of the key it tokenised with (`_runs.pii_key_check`), which a rekey moves to the new
 * key with the tokens, so that `doctor` can name versions written under another key.
 */
import BetterSqlite3, { type Database } from "better-sqlite3";
import { existsSync } from "node:fs";
import { SnapshotBusyError } from "../../errors.js";
import { piiKeyCheck, readPiiKeyCheck, snapshotIdOf } from "./pii-key-identity.js";
import { sameCheck } from "./rekey-key-file.js";

/** The snapshot was re-keyed after this command resolved its key: nothing was written; run again (exit 75). */
export class SnapshotRekeyedError extends SnapshotBusyError {
  constructor(dbPath: string) {
    super(
      `pii key: the snapshot ${dbPath} was re-keyed (pii rekey) after this command read its PII key; nothing was written under the old key. ` +
        "Run it again: it reads the new key (a BENEFITS_PII_KEY set for this command must be the new key)",
      undefined,
    );
  }
}

export class SnapshotKeyGuard {
  private check: string | undefined;

  constructor(
    private readonly db: Database,
    private readonly key: Buffer,
  ) {}

  /**
   * The check value of this writer's key, after making sure it is the one the snapshot records
   * (none recorded yet: this one is taken). Call holding the write lock, just before writing.
   * Throws {@link SnapshotRekeyedError} otherwise.
   */
  assertCurrent(): string {
    const mine = (this.check ??= piiKeyCheck(this.key, snapshotIdOf(this.db) ?? ""));
    const stored = readPiiKeyCheck(this.db);
    if (stored !== undefined && !sameCheck(stored, mine)) throw new SnapshotRekeyedError(this.db.name);
    return mine;
  }
}

/**
 * Run `write` holding the snapshot's write lock, after checking that `key` is the snapshot's: for a
 * writer outside the store whose writes name people by SSN token under the key (census apply's
 * journal intents). A `pii rekey` looks for such writes under the same lock, so either it sees
 * this one and refuses, or this one sees the new key and is refused (SnapshotRekeyedError). No
 * snapshot file: `write` alone (there is nothing to re-key).
 */
export function underSnapshotKey(dbPath: string, key: Buffer, write: () => void): void {
  if (!existsSync(dbPath)) return write();
  const db = new BetterSqlite3(dbPath, { fileMustExist: true });
  try {
    db.pragma("busy_timeout = 10000");
    db.transaction(() => {
      new SnapshotKeyGuard(db, key).assertCurrent();
      write();
    }).immediate();
  } finally {
    db.close();
  }
}
