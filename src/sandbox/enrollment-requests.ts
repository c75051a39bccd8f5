/**
 * Asynchronous enrollment requests: accepted as `pending`, then `processing`, then `succeeded` or
 * `failed` after a delay, like the service's (a caller polls GET /v1/enrollmentRequests/{id}).
 */
import { randomUuid } from "./ids.js";
import type { Rng } from "./prng.js";

export interface EnrollmentRequestRec {
  id: string;
  status: "pending" | "processing" | "succeeded" | "failed";
  createdAt: string;
  completedAt: string | null;
  errors: { path: (string | number)[]; message: string; code: string }[];
}

/** The work of a request: returns errors (failed) or an empty list (succeeded, changes applied). */
export type EnrollmentWork = () => EnrollmentRequestRec["errors"];

export class EnrollmentRequests {
  private readonly requests = new Map<string, EnrollmentRequestRec>();
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    private readonly rng: Rng,
    private readonly delayMs: number,
  ) {}

  /** Accept a request; its work runs after the delay. */
  submit(work: EnrollmentWork): EnrollmentRequestRec {
    const rec: EnrollmentRequestRec = { id: randomUuid(this.rng), status: "pending", createdAt: new Date().toISOString(), completedAt: null, errors: [] };
    this.requests.set(rec.id, rec);
    this.later(this.delayMs / 2, () => {
      rec.status = "processing";
      this.later(this.delayMs / 2, () => {
        let errors: EnrollmentRequestRec["errors"];
        try {
          errors = work();
        } catch (e) {
          errors = [{ path: [], message: e instanceof Error ? e.message : "internal error", code: "internal" }];
        }
        rec.errors = errors;
        rec.status = errors.length ? "failed" : "succeeded";
        rec.completedAt = new Date().toISOString();
      });
    });
    return rec;
  }

  get(id: string): EnrollmentRequestRec | undefined {
    return this.requests.get(id);
  }

  private later(ms: number, f: () => void): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      f();
    }, ms);
    this.timers.add(t);
  }

  close(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }
}
