import { openDatabase } from "../store/database.js";
import { loadOrCreatePiiKey, type PiiMode } from "../store/pii.js";
import { SnapshotStore } from "../store/snapshot.js";
import type { WalkedResource } from "../store/resources.js";
import type { Config } from "../config/schema.js";
import { registerSecret } from "../errors.js";

export interface OpenedSnapshot {
  readonly store: SnapshotStore;
  /** Set when no PII key was configured and one was generated beside the database: say so once. */
  readonly piiKeyCreatedAt?: string;
  close(): void;
}

/**
 * Open the snapshot file named by the configuration, with its PII key (configured, or generated
 * on first use beside the file with mode 0600).
 */
export function openSnapshot(config: Config, opts: { pii?: PiiMode } = {}): OpenedSnapshot {
  const db = openDatabase(config.db);
  try {
    const pii = loadOrCreatePiiKey(config.db, config.piiKey);
    registerSecret(pii.key.toString("hex"));
    const idFields: Partial<Record<WalkedResource, string>> = {};
    for (const r of ["designs", "groups", "members", "claims"] as const) idFields[r] = config.resources[r].idField;
    const store = new SnapshotStore(db, { piiKey: pii.key, piiMode: opts.pii ?? config.pii, idFields });
    return {
      store,
      ...(pii.created && pii.path ? { piiKeyCreatedAt: pii.path } : {}),
      close: () => db.close(),
    };
  } catch (e) {
    db.close();
    throw e;
  }
}
