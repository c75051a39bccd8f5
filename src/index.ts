/**
 * benefits-sync: the public API. Everything here is stable; anything imported from deeper paths
 * is not. The guide, with a tested example per task: docs/library.md.
 *
 * @example
 * import { createClient, openDatabase, SnapshotStore, sync, rollingWindow } from "benefits-sync";
 * const client = createClient({ baseUrl, apiKey });
 * const store = new SnapshotStore(openDatabase("snapshot.db"), { piiKey });
 * const report = await sync({ source: client, store, claimsWindow: rollingWindow(new Date(), 90) });
 */
export * from "./errors.js";
export * from "./input-errors.js";

// The service client.
export { createClient, paginate, resolveBaseUrl, retryDelay, parseRetryAfter, Environments, clientOptionsFromConfig } from "./api/index.js";
export type { ClientOptions, ServiceClient, MemberFilters, ClaimFilters, ListOptions, Page, PageResult, Logger } from "./api/index.js";
export type { AnswerSeen, CoverageTerminated, EnrollmentAccepted, EnrollmentRequestSeen, GroupCreated, MemberPatched, MembersEnrolled } from "./api/index.js";

// Configuration.
export { loadConfig, resolveService, Config } from "./config/index.js";
export type { ConfigInput, ServiceTarget } from "./config/index.js";

// The snapshot and the sync.
export { openDatabase } from "./store/file/database.js";
export { SnapshotStore, defaultDeletePolicy } from "./store/snapshot.js";
export type { DeletePolicy, RunOutcome, SnapshotOptions } from "./store/snapshot.js";
export { canonicalJson } from "./store/walk/canonical.js";
export { changedFields } from "./store/walk/field-diff.js";
export { maskPii, ssnToken, loadOrCreatePiiKey } from "./store/pii/pii.js";
export type { PiiMode } from "./store/pii/pii.js";
export { StoredResources, WalkedResources } from "./store/schema/resources.js";
export type { StoredResource, WalkedResource } from "./store/schema/resources.js";
export { scopeOf } from "./store/walk/scopes.js";
export type { Scope } from "./store/walk/scopes.js";
export type { ResourceCounts } from "./store/runs/counts.js";
export { sync } from "./pipeline/sync.js";
export type { RunReport, StartedRunReport, NotStartedReport, SyncOptions, SyncProgress } from "./pipeline/sync.js";
export { abandonRun } from "./store/runs/run-lease.js";
export { serviceIdentity, checkServiceIdentity, describeServiceIdentity } from "./store/file/service-identity.js";
export type { ServiceIdentity } from "./store/file/service-identity.js";
export { runSyncJob, claimsWindowFor } from "./pipeline/run-sync-job.js";
export type { SyncJobOptions } from "./pipeline/run-sync-job.js";
export { rollingWindow } from "./extract/scopes.js";
export type { ClaimsWindow } from "./extract/scopes.js";
export type { PageSource } from "./extract/page-source.js";

// Deltas: per run (export), and per output through the delivery ledger (sync --out).
export { writeRunCsv } from "./sinks/csv/write-run-csv.js";
export type { RunCsvResult, ManifestFile } from "./sinks/csv/write-run-csv.js";
export { deliverCsv, csvOutput } from "./sinks/csv/deliver-csv.js";
export type { CsvDelivery } from "./sinks/csv/deliver-csv.js";
export { folderSink, writeFolder, folderOutput, FileFormatNames } from "./sinks/files/folder-sink.js";
export type { DeltaFolder, FileFormat, FileFormatName } from "./sinks/files/folder-sink.js";
export { deliverFolder, exportFolder, fileFormat } from "./sinks/files/formats.js";
export type { FolderDelivery } from "./sinks/files/formats.js";
export type { Manifest } from "./sinks/files/manifest.js";
export { deliverToSink, exportRun, writeDelivery } from "./sinks/sink.js";
export type { Sink, SinkSession, DeliveryPlan, DeltaReader } from "./sinks/sink.js";
export { deliver, pendingRuns, settleInterrupted } from "./sinks/ledger.js";
export type { DeliveryOutcome, InterruptedDelivery } from "./sinks/ledger.js";
export { runDeltas } from "./sinks/run-deltas.js";
export type { Delta, DeltaOp } from "./sinks/run-deltas.js";

// Webhooks: the receiver (standalone, or mounted in a server of your own), its inbox, the worker.
export { createReceiver } from "./webhooks/server.js";
export type { Receiver, ReceiverOptions, ReceiverInbox } from "./webhooks/server.js";
export { checkReceiverSetup } from "./webhooks/receiver.js";
export type { ReceiverSetup } from "./webhooks/receiver.js";
export { SignatureVerifier, SIGNATURE_HEADER } from "./webhooks/verify.js";
export { ReceiverCounters } from "./webhooks/counters.js";
export { Inbox, inboxPathFor } from "./webhooks/inbox.js";
export type { InboxEvent, InboxStatus } from "./webhooks/inbox.js";
export { applyWebhooksOnce } from "./webhooks/apply-job.js";
export type { ApplyJobReport } from "./webhooks/apply-job.js";
export type { DrainReport } from "./webhooks/apply.js";

// The sandbox.
export { startSandbox } from "./sandbox/index.js";
export type { Sandbox, SandboxOptions, ChangeSet, FaultPlan } from "./sandbox/index.js";
