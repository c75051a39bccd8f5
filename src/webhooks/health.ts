/**
 * The receiver's `/healthz`, cheap and bounded: a load balancer may call it often, and a flood of
 * calls each doing an fsync'd write on the receiver's thread once took signed deliveries from p99
 * 77 ms to 3 s. An answer comes from the last probe of the inbox (run on the inbox's thread, see
 * {@link Inbox.probe}: it writes nothing unless a write failed) while it is fresh; at most one
 * probe is in flight, every call meanwhile shares it; and no call waits for it longer than
 * `waitMs`: a probe that takes longer (a lock held by another program, a stalled disk) is an
 * unhealthy answer now, the probe still finishing for the next call.
 */

export type Health = { readonly ok: true } | { readonly ok: false; readonly problem: string };

export interface HealthOptions {
  /** A successful probe answers the calls of this many milliseconds after it (a failure is never reused). */
  readonly freshMs?: number;
  /** How long a call waits for the probe in flight. */
  readonly waitMs?: number;
  /** The probe's failure, for the log. */
  readonly onError?: ((e: unknown) => void) | undefined;
}

export class HealthCheck {
  private okUntil = 0;
  private inFlight: Promise<Health> | undefined;
  private readonly freshMs: number;
  private readonly waitMs: number;

  constructor(
    private readonly probe: () => void | Promise<void>,
    private readonly opts: HealthOptions = {},
  ) {
    this.freshMs = opts.freshMs ?? 1000;
    this.waitMs = opts.waitMs ?? 500;
  }

  /** The inbox's health, within `waitMs`. */
  check(): Promise<Health> {
    if (performance.now() < this.okUntil) return Promise.resolve({ ok: true });
    this.inFlight ??= this.run().finally(() => (this.inFlight = undefined));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<Health>((resolve) => {
      timer = setTimeout(() => resolve({ ok: false, problem: `the inbox did not answer within ${this.waitMs} ms (a lock held by another program, or a slow disk)` }), this.waitMs);
    });
    return Promise.race([this.inFlight, late]).finally(() => clearTimeout(timer));
  }

  private async run(): Promise<Health> {
    try {
      await this.probe();
      this.okUntil = performance.now() + this.freshMs;
      return { ok: true };
    } catch (e) {
      this.opts.onError?.(e);
      return { ok: false, problem: "the inbox cannot be written" };
    }
  }
}
