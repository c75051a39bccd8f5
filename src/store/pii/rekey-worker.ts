/**
 * A thread of the token search (see rekey-recover.ts): it holds the old key's HMAC states and
 * answers each job (one last4, or a range of nine-digit numbers) with the digits it found.
 */
import { parentPort, workerData } from "node:worker_threads";
import { HmacSearcher, searchLast4, targetsOf } from "./rekey-hmac.js";

/** One last4 and its tokens, or (`from`/`to`) a range of nine-digit numbers for tokens of unknown last4. */
export interface SearchJob {
  readonly id: number;
  readonly last4?: string;
  readonly from?: number;
  readonly to?: number;
  readonly tokens: readonly string[];
}

export interface SearchReply {
  readonly id: number;
  readonly found: readonly (readonly [token: string, digits: string])[];
  readonly tries: number;
  /** Time this thread spent on the job. */
  readonly ms: number;
}

/** Run one job on `searcher`. */
export function runJob(searcher: HmacSearcher, job: SearchJob): SearchReply {
  const started = performance.now();
  const before = searcher.tries;
  const found = new Map<string, string>();
  if (job.last4 !== undefined) searchLast4(searcher, job.last4, job.tokens, found);
  else searcher.search("", 9, targetsOf(job.tokens), found, job.from, job.to);
  return { id: job.id, found: [...found], tries: searcher.tries - before, ms: performance.now() - started };
}

const port = parentPort;
if (port) {
  const searcher = new HmacSearcher(Buffer.from((workerData as { keyHex: string }).keyHex, "hex"));
  port.on("message", (job: SearchJob) => port.postMessage(runJob(searcher, job)));
}
