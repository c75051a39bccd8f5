/**
 * The snapshot a command or a job works on, opened from the configuration: the file created and
 * migrated, its PII key resolved, the store on its own thread. Here in store/, below both the sync
 * job (pipeline/run-sync-job.ts) and the webhook apply job (webhooks/apply-job.ts), so that the
 * receiver's side never imports the scheduler's.
 */
import { openDatabase } from "./database.js";
import type { PiiMode } from "../pii/pii.js";
import { resolveSnapshotPiiKey } from "../pii/pii-key-identity.js";
import type { WalkedResource } from "../schema/resources.js";
import { openWorkerSnapshot, type WorkerSnapshot } from "../worker-port.js";
import type { Config } from "../../config/schema.js";
import { registerSecret } from "../../errors.js";

export interface OpenedSnapshot {
  /** The snapshot on its own thread. */
  readonly port: WorkerSnapshot;
  /** Set when no PII key was configured and one was generated beside the database: say so once. */
  readonly piiKeyCreatedAt?: string;
  /** Set when a snapshot with runs had no PII key check yet and now records this key's. */
  readonly piiKeyAdopted?: boolean;
  close(): Promise<void>;
}

/**
 * Open the snapshot file named by the configuration on its own thread, with its PII key
 * (configured, or generated on first use beside the file with mode 0600). The file is created
 * and migrated here first, so that a problem with it is reported before any walk starts.
 */
export async function openSnapshot(config: Pick<Config, "db" | "piiKey" | "pii" | "resources">, opts: { pii?: PiiMode; record?: boolean } = {}): Promise<OpenedSnapshot> {
  openDatabase(config.db).close();
  // Another key than the one the snapshot was tokenised with is refused here (pii-key-identity.ts).
  const pii = resolveSnapshotPiiKey(config.db, config.piiKey, opts.record === false ? { record: false } : {});
  registerSecret(pii.key.toString("hex"));
  const idFields: Partial<Record<WalkedResource, string>> = {};
  for (const r of ["designs", "groups", "members", "claims"] as const) idFields[r] = config.resources[r].idField;
  const port = await openWorkerSnapshot(config.db, { piiKey: pii.key, piiMode: opts.pii ?? config.pii, idFields });
  return {
    port,
    ...(pii.created && pii.path ? { piiKeyCreatedAt: pii.path } : {}),
    ...(pii.outcome === "adopted" ? { piiKeyAdopted: true } : {}),
    close: () => port.close(),
  };
}
