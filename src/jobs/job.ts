/**
 * A scheduled job: what it walks, when, and where its changes go. One job per file in `jobs/`,
 * gathered in `jobs/index.ts`; the config file's `jobs` section can enable, disable and reschedule
 * each one (see `effectiveJobs`).
 */
import { WalkedResources, type WalkedResource } from "../store/schema/resources.js";

export interface JobDefinition {
  /** Its name in the config file, in `benefits-sync run NAME`, and in the run history (`runs.job`). */
  readonly name: string;
  readonly description: string;
  /** A cron expression (minute hour day month weekday, checked by cron-fields.ts), read in `timezone`. */
  readonly schedule: string;
  /** A sync of `resources` (default), or the monthly reconciliation report (no resources; jobs/monthly-reconcile.ts). */
  readonly kind?: "sync" | "reconcile";
  /** An IANA time zone, e.g. "America/Chicago"; "UTC" by default. */
  readonly timezone?: string;
  readonly resources: readonly WalkedResource[];
  /** The rolling claims window, in days before the run's start (default: `resources.claims.lookbackDays`). */
  readonly claimsLookbackDays?: number;
  /** The config's sinks it delivers to, by name (default: every configured sink); the config's `jobs.NAME.sinks` wins. */
  readonly sinks?: readonly string[];
  /** Off unless the config enables it. */
  readonly enabledByDefault?: boolean;
}

/** A job with the config's settings applied: what the scheduler and `run` use. */
export interface Job extends JobDefinition {
  readonly timezone: string;
  readonly enabled: boolean;
  /** The names of the config's sinks it delivers to (default: every configured sink). */
  readonly sinks: readonly string[];
  /** healthchecks-style ping URL: `/start`, then the URL itself on success or `/fail`. */
  readonly heartbeatUrl?: string;
}

/** Checks a job file's definition as it is declared, so a mistake fails at load, naming the job. */
export function defineJob(def: JobDefinition): JobDefinition {
  if (!/^[a-z][a-z0-9-]{0,63}$/.test(def.name)) throw new Error(`job name ${JSON.stringify(def.name)}: expected lowercase letters, digits and -`);
  const bad = def.resources.filter((r) => !(WalkedResources as readonly string[]).includes(r));
  if ((def.kind !== "reconcile" && def.resources.length === 0) || bad.length > 0) throw new Error(`job ${def.name}: resources must be some of ${WalkedResources.join(", ")}`);
  return Object.freeze({ ...def, resources: Object.freeze([...def.resources]) });
}
