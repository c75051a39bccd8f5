import { createClient } from "../api/client.js";
import type { Logger } from "../api/logger.js";
import { clientOptionsFromConfig } from "../config/client-options.js";
import { resolveService } from "../config/resolve-service.js";
import type { Config } from "../config/schema.js";
import type { PiiMode } from "../store/pii.js";
import type { WalkedResource } from "../store/resources.js";
import { rollingWindow, type ClaimsWindow } from "../extract/scopes.js";
import { writeRunCsv, type RunCsvResult } from "../sinks/csv/write-run-csv.js";
import { openDatabase } from "../store/database.js";
import { openSnapshot } from "./open-snapshot.js";
import { sync, type RunReport, type SyncProgress } from "./sync.js";

export interface SyncJobOptions {
  readonly config: Config;
  readonly job?: string;
  readonly resources?: readonly WalkedResource[];
  readonly claimsSince?: string;
  readonly claimsUntil?: string;
  readonly dryRun?: boolean;
  readonly allowDeletes?: boolean;
  readonly pii?: PiiMode;
  readonly today?: Date;
  readonly onProgress?: (p: SyncProgress) => void;
  /** Told once, when a PII key was generated beside the database. */
  readonly onNotice?: (message: string) => void;
  readonly logger?: Logger;
  readonly signal?: AbortSignal;
  /** Write the run's deltas as CSV under `outDir/<run_id>/` when the run succeeds. */
  readonly outDir?: string;
  /** Overrides the configured service (the demo passes its in-process sandbox). */
  readonly service?: { readonly baseUrl: string; readonly apiKey: string };
}

/** The claims window of a run: the flags, else the rolling lookback ending today. */
export function claimsWindowFor(config: Config, since?: string, until?: string, today = new Date()): ClaimsWindow {
  const rolling = rollingWindow(today, config.resources.claims.lookbackDays);
  return { from: since ?? rolling.from, to: until ?? rolling.to };
}

/**
 * One sync run from a configuration: resolves the service (the embedded sandbox when none is
 * configured), opens the snapshot, runs {@link sync}, and closes everything. Never throws for a
 * failed walk: the report says so.
 */
export async function runSyncJob(opts: SyncJobOptions): Promise<RunReport & { deltas?: RunCsvResult }> {
  const { config } = opts;
  let service = opts.service;
  let stopSandbox: (() => Promise<void>) | undefined;
  let today = opts.today;
  if (!service) {
    const target = resolveService(config);
    if (target.kind === "remote") service = { baseUrl: target.baseUrl, apiKey: target.apiKey };
    else {
      const { startSandbox } = await import("../sandbox/index.js");
      const sandbox = await startSandbox({});
      stopSandbox = () => sandbox.close();
      service = { baseUrl: sandbox.baseUrl, apiKey: sandbox.keys.full };
      // The embedded sandbox lives on its own simulated calendar: the claims window follows it.
      today ??= new Date(`${sandbox.today}T00:00:00Z`);
    }
  }
  const client = createClient({ ...clientOptionsFromConfig(config), ...service, ...(opts.logger ? { logger: opts.logger } : {}) });
  let snapshot: Awaited<ReturnType<typeof openSnapshot>> | undefined;
  try {
    snapshot = await openSnapshot(config, opts.pii ? { pii: opts.pii } : {});
    if (snapshot.piiKeyCreatedAt) {
      opts.onNotice?.(`No PII key was configured: generated one at ${snapshot.piiKeyCreatedAt} (mode 0600). Keep it with the database; set BENEFITS_PII_KEY to use your own.`);
    }
    const report = await sync({
      source: client,
      store: snapshot.port,
      job: opts.job ?? "sync",
      ...(opts.resources ? { resources: opts.resources } : {}),
      claimsWindow: claimsWindowFor(config, opts.claimsSince, opts.claimsUntil, today),
      groupConcurrency: config.sync.groupConcurrency,
      deletePolicy: {
        maxDeleteShare: config.sync.maxDeleteShare,
        maxDeleteCount: config.sync.maxDeleteCount,
        absenceRuns: config.sync.absenceRuns,
        allowDeletes: opts.allowDeletes ?? false,
      },
      dryRun: opts.dryRun ?? false,
      ...(opts.onProgress ? { onProgress: opts.onProgress } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    if (opts.outDir === undefined || report.status !== "succeeded" || report.dryRun) return report;
    // The run's final commit is already durable (synchronous=FULL) when its deltas are read.
    const db = openDatabase(config.db);
    try {
      return { ...report, deltas: writeRunCsv(db, report.runId, opts.outDir) };
    } finally {
      db.close();
    }
  } finally {
    await snapshot?.close();
    await client.close();
    await stopSandbox?.();
  }
}
