/**
 * Which service a snapshot copies. A snapshot filled from one service and then synced from another
 * would see every record of the first as deleted and every record of the second as new: the delete
 * guard stops that run, and `--allow-deletes` would then replace real members with other ones. So
 * the first run that got an answer from its service records it in `_meta` (a first run against a
 * mistyped URL records nothing), and every later run must name the same one.
 *
 * The identity is the environment name and the base URL (scheme, host, port and path); never the
 * key. The embedded sandbox listens on a new port each time it starts, so its identity is just
 * `sandbox`.
 */
import type { Database } from "better-sqlite3";
import { ConfigError } from "../../errors.js";
import { openDatabase } from "./database.js";

/** The service a snapshot copies, as stored (JSON) under the `_meta` key {@link SERVICE_META_KEY}. */
export interface ServiceIdentity {
  /** The named environment (`production`, `demo`, `sandbox`); absent for a bare base URL. */
  readonly environment?: string;
  /** Normalised; absent for the embedded sandbox. */
  readonly baseUrl?: string;
}

/** The slice of a resolved service target the identity is made from (`ServiceTarget` fits). */
export type ServiceLike =
  | { readonly kind: "sandbox" }
  | { readonly kind: "remote"; readonly environment?: string | undefined; readonly baseUrl: string };

export interface CheckOptions {
  /** False for a dry run: check, but write nothing. Default true. */
  readonly record?: boolean;
  /** The snapshot's path, for the message. */
  readonly snapshot?: string;
}

/** What {@link checkServiceIdentity} found. `adopted`: a snapshot from before services were recorded. */
export type ServiceCheck = "recorded" | "adopted" | "same";

export const SERVICE_META_KEY = "service";

/**
 * The identity of a service target. Only the fields named here are read: an API key beside them,
 * or credentials, a query or a fragment in the URL, never reach the identity.
 *
 * @example
 * serviceIdentity({ kind: "remote", environment: "demo", baseUrl: "https://Demo.test/api/", apiKey: "k" })
 * // { environment: "demo", baseUrl: "https://demo.test/api" }
 * serviceIdentity({ kind: "sandbox" }) // { environment: "sandbox" }
 */
export function serviceIdentity(target: ServiceLike): ServiceIdentity {
  if (target.kind === "sandbox") return { environment: "sandbox" };
  const baseUrl = normaliseBaseUrl(target.baseUrl);
  return target.environment ? { environment: target.environment, baseUrl } : { baseUrl };
}

/** Scheme, host and port (the default port dropped) and path, without a trailing slash. */
function normaliseBaseUrl(raw: string): string {
  const url = new URL(raw);
  return `${url.protocol}//${url.host}${url.pathname}`.replace(/\/+$/, "");
}

/**
 * For messages: `the embedded sandbox`, `the demo environment at https://demo.test`,
 * `the service at https://svc.test`.
 */
export function describeServiceIdentity(id: ServiceIdentity): string {
  if (id.baseUrl === undefined) return id.environment === "sandbox" ? "the embedded sandbox" : `the ${id.environment ?? "unknown"} environment`;
  return id.environment ? `the ${id.environment} environment at ${id.baseUrl}` : `the service at ${id.baseUrl}`;
}

/**
 * One base URL is one service, whatever name came with it (`BENEFITS_BASE_URL=X` and
 * `"environment": "production"` with `environments.production = X` are the same); the embedded
 * sandbox, which has no URL, is only itself.
 */
function sameService(a: ServiceIdentity, b: ServiceIdentity): boolean {
  if (a.baseUrl === undefined || b.baseUrl === undefined) return a.baseUrl === b.baseUrl && a.environment === b.environment;
  return a.baseUrl === b.baseUrl;
}

/** The service recorded in the snapshot, if any. */
export function readServiceIdentity(db: Database): ServiceIdentity | undefined {
  const row = db.prepare("SELECT value FROM _meta WHERE key = ?").get(SERVICE_META_KEY) as { value: string } | undefined;
  if (!row) return undefined;
  const parsed = JSON.parse(row.value) as { environment?: unknown; baseUrl?: unknown };
  return {
    ...(typeof parsed.environment === "string" ? { environment: parsed.environment } : {}),
    ...(typeof parsed.baseUrl === "string" ? { baseUrl: parsed.baseUrl } : {}),
  };
}

/**
 * Check that the snapshot copies `identity`: before a run starts (`record: false`), then again to
 * record it once the service has answered (a snapshot made before services were recorded adopts
 * the first one it sees); a different service
 * is a {@link ConfigError} (exit 2) naming both and the fix, and the snapshot is left unchanged.
 * With `record: false` (before a run, or a dry run) nothing is ever written.
 *
 * Example of the message: `service: the snapshot /data/snap.db copies the embedded sandbox, but
 * this run asks for the service at https://svc.test. ... Point --db (BENEFITS_DB) at another file
 * for the service at https://svc.test, or set the service back to the embedded sandbox (--env sandbox)`.
 *
 * @example
 * checkServiceIdentity(db, serviceIdentity(resolveService(config))) // "recorded", then "same"
 */
export function checkServiceIdentity(db: Database, identity: ServiceIdentity, opts: CheckOptions = {}): ServiceCheck {
  const compare = (stored: ServiceIdentity) => compareServices(stored, identity, opts.snapshot);
  // The usual case is a plain read, which in WAL mode never waits for a run that holds the file.
  const stored = readServiceIdentity(db);
  if (stored) return compare(stored);
  // Runs that never got an answer (a first sync to a mistyped URL) copied nothing: not adopted.
  const firstSeen = (): ServiceCheck => (db.prepare(COPIED_SOMETHING).get() !== undefined ? "adopted" : "recorded");
  if (opts.record === false) return firstSeen();
  // IMMEDIATE, and read again inside: two first runs racing on a new file must not both record.
  return db
    .transaction((): ServiceCheck => {
      const raced = readServiceIdentity(db);
      if (raced) return compare(raced);
      const outcome = firstSeen();
      const value = JSON.stringify({ environment: identity.environment, baseUrl: identity.baseUrl });
      db.prepare("INSERT INTO _meta (key, value) VALUES (?, ?)").run(SERVICE_META_KEY, value);
      return outcome;
    })
    .immediate();
}

/** A run that copied something from a service: it succeeded, or saw records before it failed. */
const COPIED_SOMETHING =
  "SELECT 1 FROM _runs r WHERE r.status = 'succeeded' OR EXISTS (SELECT 1 FROM _run_counts c WHERE c.run_id = r.run_id AND c.seen > 0) LIMIT 1";

function compareServices(stored: ServiceIdentity, requested: ServiceIdentity, snapshot: string | undefined): ServiceCheck {
  if (sameService(stored, requested)) return "same";
  const [was, asked] = [describeServiceIdentity(stored), describeServiceIdentity(requested)];
  throw new ConfigError([
    `service: the snapshot${snapshot ? ` ${snapshot}` : ""} copies ${was}, but this run asks for ${asked}. ` +
      "A snapshot syncs from one service only: syncing another would replace its records with that service's. " +
      `Point --db (BENEFITS_DB) at another file for ${asked}, ` +
      `or set the service back to ${was}${stored.baseUrl === undefined ? " (--env sandbox)" : ""}`,
  ]);
}

/**
 * {@link checkServiceIdentity} on the snapshot file at `path` (created and migrated if new), in
 * its own short connection, so that a refused run starts no worker and no walk.
 *
 * @example
 * checkSnapshotService(config.db, serviceIdentity(target), { record: !dryRun })
 */
export function checkSnapshotService(path: string, identity: ServiceIdentity, opts: { record?: boolean } = {}): ServiceCheck {
  const db = openDatabase(path);
  try {
    return checkServiceIdentity(db, identity, { ...opts, snapshot: path });
  } finally {
    db.close();
  }
}
