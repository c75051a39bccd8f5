/**
 * The worker from a configuration, as `webhooks apply` runs it: the configured service (never the
 * embedded sandbox, which sends no events here), a snapshot that already copies that service (a
 * ConfigError, nothing changed, otherwise), the inbox beside it, then {@link drainInbox} once.
 */
import { existsSync } from "node:fs";
import { createClient } from "../api/client.js";
import { clientOptionsFromConfig } from "../api/client-tuning.js";
import { resolveService } from "../config/resolve-service.js";
import type { Config } from "../config/schema.js";
import { ConfigError } from "../errors.js";
import { InputFileError } from "../input-errors.js";
import { openSnapshot } from "../store/file/open-snapshot.js";
import { checkSnapshotService, serviceIdentity } from "../store/file/service-identity.js";
import { drainInbox, type DrainInbox, type DrainReport } from "./apply.js";
import { Inbox, inboxPathFor } from "./inbox.js";
import type { ThreadInbox } from "./inbox-writer.js";

/** A drain, and the events still pending after it. */
export type ApplyJobReport = DrainReport & { readonly pendingAfter: number };

/**
 * Drain the inbox of the snapshot `config.db` once. Throws a ConfigError for a snapshot that is
 * missing or copies another service; a busy snapshot or a failed refetch is in the report.
 */
export async function applyWebhooksOnce(config: Config, opts: { signal?: AbortSignal; inbox?: ThreadInbox; onApplied?: (lagSeconds: number) => void } = {}): Promise<ApplyJobReport> {
  if (!existsSync(config.db)) throw new InputFileError([`db: no snapshot at ${config.db}; run \`benefits-sync sync\` first: the worker applies events to a snapshot a full walk made`]);
  const target = resolveService(config);
  if (target.kind !== "remote") throw new ConfigError(["webhooks apply: the embedded sandbox sends no events here; set the service (BENEFITS_BASE_URL, or --base-url) that sends them"]);
  checkSnapshotService(config.db, serviceIdentity(target), { record: false });
  const client = createClient({ ...clientOptionsFromConfig(config), baseUrl: target.baseUrl, apiKey: target.apiKey });
  // `webhooks serve` gives the inbox on its own thread: a lock on it never blocks the receiver.
  const own = opts.inbox ? undefined : Inbox.open(inboxPathFor(config.db));
  const inbox: DrainInbox & Pick<ThreadInbox | Inbox, "status"> = opts.inbox ?? own!;
  try {
    // Nothing due: the snapshot (and its worker thread) is not opened; `webhooks serve` asks every second.
    if ((await inbox.due(new Date().toISOString(), 1)).length === 0) {
      const pruned = await inbox.prune(new Date(Date.now() - config.webhooks.retentionDays * 86_400_000).toISOString());
      return { runs: [], applied: 0, notFound: 0, retrying: 0, parked: 0, pruned, pendingAfter: (await inbox.status(0)).pending };
    }
    const snapshot = await openSnapshot(config);
    try {
      const report = await drainInbox({
        inbox,
        source: client,
        store: snapshot.port,
        settings: config.webhooks,
        concurrency: config.http.concurrency,
        deletePolicy: { maxDeleteShare: config.sync.maxDeleteShare, maxDeleteCount: config.sync.maxDeleteCount, emptyScopeMin: config.sync.emptyScopeMin, absenceRuns: config.sync.absenceRuns },
        ...(opts.signal ? { signal: opts.signal } : {}),
        ...(opts.onApplied ? { onApplied: opts.onApplied } : {}),
      });
      return { ...report, pendingAfter: (await inbox.status(0)).pending };
    } finally {
      await snapshot.close();
    }
  } finally {
    own?.close();
    await client.close();
  }
}
