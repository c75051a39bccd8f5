/**
 * A deliberate change of the PII key (`benefits-sync pii rekey`): every token of the old key in
 * the snapshot, current versions and history, is written again under the new key, in one write
 * transaction. HMAC is one way, so the digits are found first (rekey-recover.ts: each token is
 * tried against the digits that end in its last4), outside the transaction; then, holding the
 * write lock like a sync's claim, the versions are rewritten (data, hash, typed columns), the
 * check value replaced, and what the old key keyed (fingerprints, the page cache) reset. A rekey
 * records no run and no change: the records are the same.
 */
import type { Database } from "better-sqlite3";
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { availableParallelism } from "node:os";
import { BenefitsSyncError } from "../../errors.js";
import { refreshTypedSql } from "../schema/analyst-schema.js";
import { canonicalJson } from "../walk/canonical.js";
import { openDatabase } from "../file/database.js";
import { startErasure, tryFinish } from "../file/erasure.js";
import { PII_KEY_CHECK_META, piiKeyCheck, readPiiKeyCheck, snapshotIdOf } from "./pii-key-identity.js";
import { ssnToken } from "./pii.js";
import { HmacSearcher, TRIES_PER_LAST4, targetsOf } from "./rekey-hmac.js";
import { recoverDigits, triesFor, type Recovery } from "./rekey-recover.js";
import { completePendingKey, installPendingKey, pendingKeyPath, sameCheck, writePendingKey } from "./rekey-key-file.js";
import { TokenCensus, retokenised, retokeniseText } from "./rekey-tokens.js";
import { StoredResources, type StoredResource } from "../schema/resources.js";
import { rewriteVersionsInPlace } from "./version-rewrite.js";
import { DEFAULT_LEASE_MS, isBusy, lockedError, reapOrRefuse, refuseIfHeld, type LeaseHolder } from "../runs/run-lease.js";

/** A rekey that cannot go ahead as asked (exit 2): the message says why and what to do. */
export class RekeyRefusedError extends BenefitsSyncError {
  readonly code = "REKEY_REFUSED";
}

export interface RekeyProgress {
  step(what: string, done?: number, total?: number): void;
}

export interface RekeyOptions {
  readonly dbPath: string;
  readonly oldKey: Buffer;
  /** Where the old key came from, for messages (`the key file …`, `OLD_PII_KEY`). */
  readonly oldSource: string;
  /** The configured new key; undefined: a new random key, kept as the key file beside the snapshot. */
  readonly newKey?: Buffer | undefined;
  /** Tokens whose digits are not found become null (`[ssn]` in text) instead of refusing the rekey. */
  readonly dropUnrecoverable?: boolean;
  /** Try every nine-digit number for the tokens whose last4 is not known. */
  readonly exhaustive?: boolean;
  readonly dryRun?: boolean;
  readonly threads?: number;
  readonly progress?: RekeyProgress;
  /**
   * Writes elsewhere that name people by tokens of the old key and are not settled (the census
   * journals beside the snapshot, `journalsWithOpenWrites`): any there refuses the rekey. Asked of
   * the caller, so that the store knows nothing of the census.
   */
  readonly unsettledWrites: (dbPath: string) => readonly { readonly path: string; readonly open: number }[];
  /** Tests: called between the commit and the key file's rename (a crash there). */
  readonly afterCommit?: () => void;
}

export interface RekeyReport {
  readonly dryRun: boolean;
  /** Distinct tokens, the places they are held, and the distinct last4 searched. */
  readonly tokens: number;
  readonly places: number;
  readonly last4s: number;
  /** Tokens whose last4 is not known: found through a key field, else by the exhaustive search only. */
  readonly bare: number;
  readonly recovered: number;
  readonly unrecoverable: number;
  readonly versionsRewritten: number;
  readonly tries: number;
  readonly usPerTry: number;
  readonly threads: number;
  readonly seconds: number;
  /** The dry run's estimate of the search, in seconds. */
  readonly estimateSeconds?: number;
  /** The new key file, when the new key is one. */
  readonly keyFile?: string;
  /** An earlier rekey had committed without renaming its key file: that was finished, and nothing else done. */
  readonly completedPending?: boolean;
  /** The WAL was emptied after the rewrite (erasure.ts); false: a reader held it, the old tokens leave it at the next checkpoint. */
  readonly walEmptied?: boolean;
  /** The file, written before the erasure rule, was rewritten whole (VACUUM) so that no older copy of an old token stays. */
  readonly rewrittenWhole?: boolean;
  /** Why it could not be (too little disk): older copies of old tokens may stay in the file until `prune --vacuum`. */
  readonly fileNote?: string;
}

/** A version's data that may hold a token (a `…_token` key, or `[ssn:` in text). */
const HOLDS_TOKEN = `data LIKE '%\\_token"%' ESCAPE '\\' OR data LIKE '%[ssn:%'`;
const outsider = (): LeaseHolder => ({ owner: randomBytes(8).toString("hex"), leaseMs: DEFAULT_LEASE_MS, now: () => new Date() });

/**
 * Re-tokenise the snapshot at `dbPath` from `oldKey` to the new key.
 *
 * @example await rekeySnapshot({ dbPath: "snap.db", oldKey, oldSource: "OLD_PII_KEY", newKey: Buffer.from(process.env.BENEFITS_PII_KEY!), unsettledWrites: journalsWithOpenWrites })
 */
export async function rekeySnapshot(o: RekeyOptions): Promise<RekeyReport> {
  const started = performance.now();
  const db = openDatabase(o.dbPath, { readonly: o.dryRun === true });
  const lease = outsider();
  try {
    refuseIfHeld(db, lease);
    refuseOpenJournals(o.unsettledWrites(o.dbPath));
    // A rekey that committed and stopped before renaming its key file: finishing it is all there is to do.
    if (!o.dryRun && completePendingKey(o.dbPath, (k) => piiKeyCheck(k, snapshotIdOf(db) ?? ""), readPiiKeyCheck(db)) === "completed") {
      return { ...counts(new TokenCensus(), 0), completedPending: true, dryRun: false, tries: 0, usPerTry: 0, threads: 0, seconds: elapsed(started), keyFile: `${o.dbPath}.pii-key` };
    }
    checkKeys(db, o);
    o.progress?.step("reading the tokens");
    const census = collect(db);
    const seen = db.pragma("data_version", { simple: true });
    const unpaired = census.unpaired();
    if (o.dryRun) return { ...counts(census, unpaired.length), ...estimate(o.oldKey, census, unpaired.length > 0 && o.exhaustive === true, o.threads), dryRun: true, seconds: elapsed(started) };
    const recovery = await recoverDigits(o.oldKey, byLast4(census), {
      exhaustive: o.exhaustive ? unpaired : [],
      ...(o.threads ? { threads: o.threads } : {}),
      onProgress: (done, total) => o.progress?.step("finding the digits of each token", done, total),
    });
    let written: Written;
    // Under the erasure rule (erasure.ts): no token of the old key left in the file's bytes.
    const erasure = startErasure(db);
    try {
      db.exec("BEGIN IMMEDIATE");
    } catch (e) {
      tryFinish(erasure);
      throw isBusy(e) ? lockedError(db, lease) : e;
    }
    try {
      reapOrRefuse(db, lease, false);
      // Again under the write lock: a census apply writes its intents holding it (store/pii/key-guard.ts).
      refuseOpenJournals(o.unsettledWrites(o.dbPath));
      // Another run committed since the tokens were read: its new tokens are looked for too.
      const now = db.pragma("data_version", { simple: true }) === seen ? census : collect(db);
      if (now !== census) await recoverMissing(o.oldKey, now, recovery, o.exhaustive === true);
      written = rewrite(db, o, now, recovery.found);
      db.exec("COMMIT");
    } catch (e) {
      if (db.inTransaction) db.exec("ROLLBACK");
      if (o.newKey === undefined) rmSync(pendingKeyPath(o.dbPath), { force: true });
      tryFinish(erasure);
      throw e;
    }
    o.afterCommit?.();
    if (written.keyFile) installPendingKey(o.dbPath, written.keyFile);
    // A file written before the rule is rewritten whole here: its unused room holds older copies.
    const erased = erasure.finish();
    return {
      walEmptied: erased.walEmptied,
      ...(erased.rewritten ? { rewrittenWhole: true } : {}),
      ...(erased.note ? { fileNote: erased.note } : {}),
      ...counts(census, unpaired.length),
      dryRun: false,
      recovered: recovery.found.size,
      unrecoverable: written.unrecoverable,
      versionsRewritten: written.versions,
      tries: recovery.tries,
      usPerTry: recovery.usPerTry,
      threads: recovery.threads,
      seconds: elapsed(started),
      ...(written.keyFile ? { keyFile: `${o.dbPath}.pii-key` } : {}),
    };
  } finally {
    db.close();
  }
}

/** A census journal with open writes names people by tokens of the old key: it must be settled first. */
function refuseOpenJournals(open: ReturnType<RekeyOptions["unsettledWrites"]>): void {
  if (open.length === 0) return;
  const writes = open.reduce((n, j) => n + j.open, 0);
  throw new RekeyRefusedError(
    `pii rekey: ${open.map((j) => j.path).join(", ")} ${open.length === 1 ? "holds" : "hold"} ${writes} census write${writes === 1 ? "" : "s"} with no settled outcome, ` +
      "recorded by SSN token under the current key; nothing was changed. Run the census apply again (`benefits-sync census apply FILE --group G`) until it completes, then rekey",
  );
}

/** The old key must be the snapshot's, and the new one another. */
function checkKeys(db: Database, o: RekeyOptions): void {
  const stored = readPiiKeyCheck(db);
  const id = snapshotIdOf(db) ?? "";
  if (o.newKey?.equals(o.oldKey)) throw new RekeyRefusedError(`pii rekey: the new key (BENEFITS_PII_KEY) is the old one (${o.oldSource}); nothing to do. Set BENEFITS_PII_KEY to the new key`);
  if (stored === undefined || sameCheck(piiKeyCheck(o.oldKey, id), stored)) return;
  const already = o.newKey !== undefined && sameCheck(piiKeyCheck(o.newKey, id), stored);
  throw new RekeyRefusedError(
    already
      ? `pii rekey: the snapshot is already tokenised with the new key (BENEFITS_PII_KEY); nothing to do`
      : `pii rekey: the old key (${o.oldSource}) is not the one the snapshot ${o.dbPath} was tokenised with; nothing was changed. ` +
          "Give the key it was made with: --old-key-env NAME, naming a variable that holds it, or its key file at <db>.pii-key",
  );
}

/** The tokens of every version of every resource. */
function collect(db: Database): TokenCensus {
  const census = new TokenCensus();
  for (const r of StoredResources) {
    const rows = db.prepare(`SELECT data FROM _${r}_d WHERE ${HOLDS_TOKEN}`).pluck().iterate() as IterableIterator<string>;
    for (const data of rows) census.add(r, JSON.parse(data));
  }
  return census;
}

function byLast4(census: TokenCensus): Map<string, string[]> {
  return new Map([...census.byLast4].map(([l, set]) => [l, [...set]]));
}

/** Look for the tokens a run added between the search and the transaction (few: on this thread). */
async function recoverMissing(key: Buffer, census: TokenCensus, recovery: Recovery, exhaustive: boolean): Promise<void> {
  const missing = new Map<string, string[]>();
  for (const [l, set] of census.byLast4) {
    const left = [...set].filter((t) => !recovery.found.has(t));
    if (left.length) missing.set(l, left);
  }
  const bare = census.unpaired().filter((t) => !recovery.found.has(t));
  const more = await recoverDigits(key, missing, { exhaustive: exhaustive ? bare : [] });
  for (const [t, d] of more.found) recovery.found.set(t, d);
}

/** The transaction's writes; refuses (before any) when tokens are left whose digits were not found. */
/** What the transaction wrote; `keyFile`: the new key, written as `<db>.pii-key.new`, to rename after the commit. */
interface Written {
  versions: number;
  readonly unrecoverable: number;
  readonly keyFile?: Buffer;
}

function rewrite(db: Database, o: RekeyOptions, census: TokenCensus, found: ReadonlyMap<string, string>): Written {
  const lost = [...census.where.keys()].filter((t) => !found.has(t));
  if (lost.length > 0 && !o.dropUnrecoverable) throw unrecoverableError(census, lost, o.exhaustive === true);
  // A new key file left by a rekey that never committed (this one holds the write lock) goes.
  if (o.newKey !== undefined) rmSync(pendingKeyPath(o.dbPath), { force: true });
  const newKey = o.newKey ?? writePendingKey(o.dbPath);
  const written: Written = { versions: 0, unrecoverable: lost.length, ...(o.newKey === undefined ? { keyFile: newKey } : {}) };
  const next = new Map<string, string | null>(lost.map((t) => [t, null]));
  for (const [t, digits] of found) next.set(t, ssnToken(digits, newKey));
  for (const r of StoredResources) written.versions += rewriteVersions(db, r, next, (n) => o.progress?.step(`rewriting the ${r} versions`, n));
  rewriteExcerpts(db, next);
  const check = piiKeyCheck(newKey, snapshotIdOf(db) ?? "");
  db.prepare("INSERT INTO _meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(PII_KEY_CHECK_META, check);
  // Every token is now the new key's: so is every run's (key-guard.ts; doctor compares them).
  db.prepare("UPDATE _runs SET pii_key_check = ?").run(check);
  // Keyed by the old key: every fingerprint and every remembered page would never match again.
  for (const r of StoredResources) db.prepare(`UPDATE _${r}_v SET fp = NULL WHERE fp IS NOT NULL`).run();
  db.prepare("DELETE FROM _pages").run();
  return written;
}

function unrecoverableError(census: TokenCensus, lost: readonly string[], exhaustive: boolean): RekeyRefusedError {
  const where = new Map<string, number>();
  for (const t of lost) where.set(census.where.get(t)!, (where.get(census.where.get(t)!) ?? 0) + 1);
  const places = [...where].slice(0, 5).map(([p, n]) => `${p} (${n})`).join(", ");
  return new RekeyRefusedError(
    `pii rekey: the digits of ${lost.length} token${lost.length === 1 ? "" : "s"} were not found under the old key (${places}${where.size > 5 ? ", …" : ""}); nothing was changed. ` +
      (exhaustive ? "" : "Tokens in free text that no key field shares are found only with --exhaustive (every nine-digit number: minutes). ") +
      "To go on without them, --drop-unrecoverable sets them to null (an [ssn:…] in text becomes [ssn])",
  );
}

/** Rewrite each version that holds a token, and its typed columns; returns how many. */
function rewriteVersions(db: Database, r: StoredResource, next: ReadonlyMap<string, string | null>, progress: (versions: number) => void): number {
  const typed = db.prepare(refreshTypedSql(r));
  return rewriteVersionsInPlace(db, r, HOLDS_TOKEN, (data) => canonicalJson(retokenised(JSON.parse(data), next)), (vid, n) => {
    typed.run(vid);
    if (n % 1000 === 0) progress(n);
  });
}

/** A quarantined item's excerpt (masked JSON, cut at 500 characters) holds tokens too. */
function rewriteExcerpts(db: Database, next: ReadonlyMap<string, string | null>): void {
  const rows = db.prepare("SELECT rowid, excerpt FROM _quarantine WHERE excerpt LIKE '%_token%' OR excerpt LIKE '%[ssn:%'").raw().all() as [number, string][];
  const write = db.prepare("UPDATE _quarantine SET excerpt = ? WHERE rowid = ?");
  for (const [rowid, text] of rows) {
    const out = retokeniseText(text, next).replace(/"([0-9a-f]{64})"/g, (whole, t: string) => (next.has(t) ? JSON.stringify(next.get(t)) : whole));
    if (out !== text) write.run(out, rowid);
  }
}

function counts(census: TokenCensus, bare: number) {
  return { tokens: census.distinct(), places: census.places, last4s: census.byLast4.size, bare, recovered: 0, unrecoverable: 0, versionsRewritten: 0 };
}

/** The search's cost, measured on this machine with a short sample. */
function estimate(key: Buffer, census: TokenCensus, exhaustive: boolean, threads?: number) {
  const s = new HmacSearcher(key);
  const t0 = performance.now();
  s.search("0000", 5, targetsOf([]), new Map(), 0, 20_000);
  const usPerTry = ((performance.now() - t0) * 1000) / s.tries;
  const tries = triesFor(census.byLast4.size, exhaustive);
  const cores = Math.max(1, Math.min(threads ?? availableParallelism(), Math.ceil(tries / TRIES_PER_LAST4)));
  return { tries, usPerTry, threads: cores, estimateSeconds: (tries * usPerTry) / cores / 1e6 };
}

const elapsed = (started: number) => (performance.now() - started) / 1000;
