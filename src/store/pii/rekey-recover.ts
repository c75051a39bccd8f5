/**
 * Recovering the digits of a snapshot's tokens under its old key, across the machine's cores:
 * one job per distinct last4 (all the tokens that end in it are tried together, 111,111 tries),
 * then, only when asked (`exhaustive`), every nine-digit number for the tokens whose last4 is not
 * known (an `[ssn:…]` in free text that no key field shares), in ranges of ten million.
 */
import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import { workerScript } from "../../worker-script.js";
import { HmacSearcher, TRIES_PER_LAST4 } from "./rekey-hmac.js";
import { runJob, type SearchJob, type SearchReply } from "./rekey-worker.js";

/** Below this many tries the search runs on this thread: starting threads would cost more. */
const INLINE_TRIES = 1_000_000;
const RANGE = 10_000_000;
const NINE_DIGITS = 1_000_000_000;

export interface RecoverOptions {
  /** Tokens whose last4 is unknown: looked for among all nine-digit numbers. */
  readonly exhaustive?: readonly string[];
  /** Threads to use (default: the machine's cores). */
  readonly threads?: number;
  readonly onProgress?: (tries: number, total: number) => void;
}

export interface Recovery {
  /** The digits of each token found. */
  readonly found: Map<string, string>;
  readonly tries: number;
  /** Time the threads spent, summed, per try: what one core costs a try. */
  readonly usPerTry: number;
  readonly threads: number;
}

/** Tries a search of `last4s` distinct last4 (and, exhaustive, the nine-digit numbers) makes at most. */
export function triesFor(last4s: number, exhaustive: boolean): number {
  return last4s * TRIES_PER_LAST4 + (exhaustive ? NINE_DIGITS : 0);
}

/**
 * Find the digits of the tokens of `byLast4` (tokens grouped by the last4 beside them) under `key`.
 *
 * @example const { found } = await recoverDigits(oldKey, new Map([["6789", [token]]])); found.get(token) // "123456789"
 */
export async function recoverDigits(key: Buffer, byLast4: ReadonlyMap<string, readonly string[]>, opts: RecoverOptions = {}): Promise<Recovery> {
  const jobs: SearchJob[] = [...byLast4].map(([last4, tokens], i) => ({ id: i, last4, tokens }));
  const unknown = [...new Set(opts.exhaustive ?? [])];
  const total = triesFor(jobs.length, unknown.length > 0);
  const found = new Map<string, string>();
  let tries = 0;
  let busyMs = 0;
  const take = (r: SearchReply) => {
    for (const [t, d] of r.found) found.set(t, d);
    tries += r.tries;
    busyMs += r.ms;
    opts.onProgress?.(tries, total);
  };
  // The ranges of nine-digit numbers, made while a token of unknown last4 is still not found.
  let nextFrom = 0;
  const nextJob = (): SearchJob | undefined => {
    const job = jobs.shift();
    if (job) return job;
    const left = unknown.filter((t) => !found.has(t));
    if (left.length === 0 || nextFrom >= NINE_DIGITS) return undefined;
    const from = nextFrom;
    nextFrom += RANGE;
    return { id: -1, from, to: from + RANGE, tokens: left };
  };
  const inline = total <= INLINE_TRIES;
  const threads = inline ? 1 : Math.max(1, Math.min(opts.threads ?? availableParallelism(), jobs.length + (unknown.length > 0 ? NINE_DIGITS / RANGE : 0)));
  if (inline) {
    const searcher = new HmacSearcher(key);
    for (let job = nextJob(); job; job = nextJob()) take(runJob(searcher, job));
  } else {
    await Promise.all(Array.from({ length: threads }, () => searchThread(key, nextJob, take)));
  }
  return { found, tries, usPerTry: tries > 0 ? (busyMs * 1000) / tries : 0, threads };
}

/** One thread taking jobs until none is left. */
async function searchThread(key: Buffer, nextJob: () => SearchJob | undefined, take: (r: SearchReply) => void): Promise<void> {
  const worker = new Worker(workerScript(import.meta.url, "./rekey-worker.js"), { workerData: { keyHex: key.toString("hex") } });
  try {
    await new Promise<void>((resolve, reject) => {
      const send = () => {
        const job = nextJob();
        if (job) worker.postMessage(job);
        else resolve();
      };
      worker.on("message", (r: SearchReply) => {
        take(r);
        send();
      });
      worker.once("error", reject);
      worker.once("exit", (code) => reject(new Error(`a token search thread stopped (exit ${code})`)));
      send();
    });
  } finally {
    worker.removeAllListeners("exit");
    await worker.terminate();
  }
}
