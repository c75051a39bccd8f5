import { newFieldsNotice, newFieldsOfRun } from "./new-fields-notice.js";
import { createClient } from "../api/client.js";
import type { Logger } from "../api/logger.js";
import { clientOptionsFromConfig } from "../api/client-tuning.js";
import { resolveService, type ServiceTarget } from "../config/resolve-service.js";
import type { Config, EnvironmentName } from "../config/schema.js";
import type { PiiMode } from "../store/pii/pii.js";
import { WalkedResources, type WalkedResource } from "../store/schema/resources.js";
import { rollingWindow, type ClaimsWindow } from "../extract/scopes.js";
import type { DeltaFolder, FileFormatName } from "../sinks/files/folder-sink.js";
import type { LayoutName } from "../sinks/files/table-layout.js";
import type { CsvDelivery } from "../sinks/csv/deliver-csv.js";
import { deliverAll, outSpec, type OutputDelivery, type OutputSpec } from "../sinks/outputs.js";
import { openDatabase } from "../store/file/database.js";
import { checkSnapshotService, describeServiceIdentity, serviceIdentity, type ServiceIdentity } from "../store/file/service-identity.js";
import { openSnapshot } from "../store/file/open-snapshot.js";
import { bindOnFirstAnswer } from "./bind-on-answer.js";
import { sync, type RunReport, type SyncProgress } from "./sync.js";
import { notStarted } from "./run-report.js";
import { SnapshotBusyError } from "../errors.js";
import { asSnapshotBusy, refuseIfTaken } from "../store/file/snapshot-busy.js";
import { claimsWindowNotices } from "./claims-notices.js";
import { sandboxToday } from "./sandbox-today.js";
import type { Span } from "@opentelemetry/api";
import { Attr, inSpan, markFailed, SpanNames } from "../telemetry/spans.js";

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
  /** Write the run's deltas under `outDir/00000010/` (run 10) when the run succeeds (an output, like those in `outputs`); an absolute folder or `s3://bucket/prefix`. */
  readonly outDir?: string;
  /** The first run `outDir` receives when it is new (`--from-run`); default: every recorded run. */
  readonly outFromRun?: number;
  /** The files `outDir` gets: csv (default), jsonl or parquet. */
  readonly outFormat?: FileFormatName;
  /** How `outDir` lays its files out: run folders (default) or tables (files/table-layout.ts). */
  readonly outLayout?: LayoutName;
  /** Where to deliver the deltas when the run succeeds: folders, warehouses (each through the ledger). */
  readonly outputs?: readonly OutputSpec[];
  /**
   * Overrides the configured service (e.g. an in-process sandbox). The snapshot records it like a
   * configured one: by `environment` and `baseUrl`, or as `sandbox` when `environment` is "sandbox".
   */
  readonly service?: { readonly baseUrl: string; readonly apiKey: string; readonly environment?: EnvironmentName };
}

/** The claims window of a run: the flags, else the rolling lookback ending today. */
export function claimsWindowFor(config: Config, since?: string, until?: string, today = new Date()): ClaimsWindow {
  const rolling = rollingWindow(today, config.resources.claims.lookbackDays);
  return { from: since ?? rolling.from, to: until ?? rolling.to };
}

/** The identity of a service passed in `opts.service`: its URL, or `sandbox` when it says it is one. */
function overrideIdentity(s: NonNullable<SyncJobOptions["service"]>): ServiceIdentity {
  return serviceIdentity(s.environment === "sandbox" ? { kind: "sandbox" } : { kind: "remote", environment: s.environment, baseUrl: s.baseUrl });
}

/**
 * One sync run from a configuration: resolves the service (a ConfigError when none is configured;
 * the embedded sandbox only when named), checks that the snapshot copies that service (a
 * ConfigError, and nothing changed, when it copies another), opens the snapshot, runs
 * {@link sync}, and closes everything. Never throws for a failed walk: the report says so.
 */
export function runSyncJob(opts: SyncJobOptions): Promise<RunReport & { delivery?: CsvDelivery; deltas?: DeltaFolder; deliveries?: OutputDelivery[] }> {
  const job = opts.job ?? "sync";
  const resources = opts.resources ?? WalkedResources;
  return inSpan(SpanNames.run, { [Attr.job]: job, [Attr.resources]: [...resources], [Attr.dryRun]: opts.dryRun ?? false }, async (span) => {
    const report = await runUntraced(opts);
    tellSpan(span, report);
    return report;
  });
}

/** What {@link runSyncJob} reports: the run's, and each output's delivery. */
type SyncJobReport = RunReport & { delivery?: CsvDelivery; deltas?: DeltaFolder; deliveries?: OutputDelivery[] };

/** The run span's end: the run's id and status, and a failure by its code (never its message). */
function tellSpan(span: Span, report: SyncJobReport): void {
  if (report.runId !== null) span.setAttribute(Attr.runId, report.runId);
  span.setAttribute(Attr.runStatus, report.status);
  if (report.resumedFrom !== undefined) span.setAttribute(Attr.resumedFrom, report.resumedFrom);
  if (report.status === "failed") markFailed(span, report.error?.code ?? "FAILED");
}

async function runUntraced(opts: SyncJobOptions): Promise<SyncJobReport> {
  const { config } = opts;
  // Both checks come before anything starts: a refused run leaves the snapshot as it was.
  const target: ServiceTarget | { readonly kind: "given"; readonly given: NonNullable<SyncJobOptions["service"]> } = opts.service
    ? { kind: "given", given: opts.service }
    : resolveService(config);
  const identity = target.kind === "given" ? overrideIdentity(target.given) : serviceIdentity(target);
  // Checked now; recorded only once the service has answered (see bind-on-answer.ts).
  // A snapshot another run holds is refused before anything is written or waited for.
  const refused = (e: unknown): RunReport => {
    const busy = asSnapshotBusy(config.db, e);
    if (busy instanceof SnapshotBusyError) return notStarted({ code: busy.code, message: busy.message }, opts.dryRun ?? false, 0);
    throw busy;
  };
  let bound: boolean;
  try {
    refuseIfTaken(config.db);
    bound = checkSnapshotService(config.db, identity, { record: false }) === "same";
  } catch (e) {
    return refused(e);
  }
  const bind = () => {
    if (checkSnapshotService(config.db, identity) !== "adopted") return;
    opts.onNotice?.(
      `This snapshot did not record which service it copies (it predates that): it now copies ${describeServiceIdentity(identity)}. ` +
        "If its earlier runs came from another service, start a new snapshot with --db.",
    );
  };
  let stopSandbox: (() => Promise<void>) | undefined;
  let today = opts.today;
  let service: { readonly baseUrl: string; readonly apiKey: string };
  if (target.kind === "given") service = { baseUrl: target.given.baseUrl, apiKey: target.given.apiKey };
  else if (target.kind === "remote") service = { baseUrl: target.baseUrl, apiKey: target.apiKey };
  else {
    const { startSandbox } = await import("../sandbox/index.js");
    const sandbox = await startSandbox({});
    stopSandbox = () => sandbox.close();
    service = { baseUrl: sandbox.baseUrl, apiKey: sandbox.keys.full };
    // The embedded sandbox lives on its own simulated calendar: the claims window follows it.
    today ??= new Date(`${sandbox.today}T00:00:00Z`);
  }
  // So does a sandbox in another process (`benefits-sync sandbox`, then `sandbox advance`): a
  // default window that ends on the real date would miss the days it was advanced by.
  if (today === undefined && opts.claimsUntil === undefined && (opts.resources ?? ["claims"]).includes("claims")) {
    today = await sandboxToday(service.baseUrl);
  }
  const client = createClient({ ...clientOptionsFromConfig(config), ...service, ...(opts.logger ? { logger: opts.logger } : {}) });
  let snapshot: Awaited<ReturnType<typeof openSnapshot>> | undefined;
  try {
    try {
      snapshot = await openSnapshot(config, { ...(opts.pii ? { pii: opts.pii } : {}), record: !opts.dryRun });
    } catch (e) {
      return refused(e);
    }
    if (snapshot.piiKeyCreatedAt) {
      opts.onNotice?.(`No PII key was configured: generated one at ${snapshot.piiKeyCreatedAt} (mode 0600). Keep it with the database; set BENEFITS_PII_KEY to use your own.`);
    }
    if (snapshot.piiKeyAdopted) opts.onNotice?.("This snapshot did not record which PII key tokenised it (it predates that): it now records this run's key.");
    // Computed once, from the run's start: a run that crosses midnight keeps one window.
    const claimsWindow = claimsWindowFor(config, opts.claimsSince, opts.claimsUntil, today);
    let report: RunReport = await sync({
      source: opts.dryRun || bound ? client : bindOnFirstAnswer(client, bind),
      store: snapshot.port,
      job: opts.job ?? "sync",
      ...(opts.resources ? { resources: opts.resources } : {}),
      claimsWindow,
      groupConcurrency: config.sync.groupConcurrency,
      deletePolicy: {
        maxDeleteShare: config.sync.maxDeleteShare,
        maxDeleteCount: config.sync.maxDeleteCount,
        emptyScopeMin: config.sync.emptyScopeMin,
        absenceRuns: config.sync.absenceRuns,
        allowDeletes: opts.allowDeletes ?? false,
      },
      dryRun: opts.dryRun ?? false,
      ...(opts.onProgress ? { onProgress: opts.onProgress } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    const fresh = report.runId !== null && !report.dryRun ? newFieldsOfRun(config.db, report.runId) : [];
    if (fresh.length > 0 && report.runId !== null) {
      opts.onNotice?.(newFieldsNotice(report.runId, fresh));
      report = { ...report, newFields: fresh };
    }
    if (report.status === "succeeded" && !report.dryRun && (opts.resources ?? ["claims"]).includes("claims") && opts.onNotice) {
      for (const n of claimsWindowNotices(config.db, claimsWindow, report.resources.claims?.seen ?? 0, report.resumedFrom)) opts.onNotice(n);
    }
    // Only after a successful run: a failed run's committed changes stay pending for each output
    // and ride with the next successful delivery (the ledger, src/sinks/ledger.ts).
    const outDir: OutputSpec[] = opts.outDir !== undefined ? [{ ...outSpec(opts.outDir, opts.outFormat ?? "csv", process.cwd(), opts.outLayout), ...(opts.outFromRun !== undefined ? { fromRun: opts.outFromRun } : {}) }] : [];
    const outputs: OutputSpec[] = [...outDir, ...(opts.outputs ?? [])];
    if (outputs.length === 0 || report.status !== "succeeded" || report.dryRun) return report;
    // The run's final commit is already durable (synchronous=FULL) when its deltas are read.
    const db = openDatabase(config.db);
    try {
      // Every change each output has not received. Never throws: a failed delivery is in its
      // outcome (the run stays succeeded; the CLI exits 1).
      // SIGINT and SIGTERM stop an S3 upload in flight too: its delivery stays pending.
      const deliveries = await deliverAll(db, outputs, report.runId, opts.signal ? { signal: opts.signal } : {});
      const first = opts.outDir !== undefined ? deliveries[0] : undefined;
      if (!first) return { ...report, deliveries };
      const delivery = { ...(first.outcome as CsvDelivery), outDir: first.target, format: opts.outFormat ?? "csv" };
      return { ...report, deliveries, delivery, ...(delivery.status === "delivered" && delivery.value ? { deltas: delivery.value } : {}) };
    } finally {
      db.close();
    }
  } finally {
    await snapshot?.close();
    await client.close();
    await stopSandbox?.();
  }
}
