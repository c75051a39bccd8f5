/**
 * The service's outbound webhooks: event configurations, one `member_update` per changed or new
 * member, `X-Service-Signature` (HMAC-SHA256 of the raw body, lowercase hex) when a secret is set,
 * a fixed delay between attempts, delivery records, manual retries that resend the original event id,
 * and, on demand, duplicate and out-of-order delivery.
 */
import { createHmac } from "node:crypto";
import pLimit from "p-limit";
import { request } from "undici";
import { z } from "zod";
import { randomUuid } from "./ids.js";
import type { Rng } from "./prng.js";

export const WebhookAuthSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("apiKey"), key: z.string().min(1), header: z.string().min(1).optional() }),
  z.object({ type: z.literal("basic"), username: z.string(), password: z.string() }),
  z.object({ type: z.literal("bearer"), token: z.string().min(1) }),
]);
export type WebhookAuth = z.infer<typeof WebhookAuthSchema>;

export const WebhookConfigInputSchema = z.object({
  url: z.url(),
  auth: WebhookAuthSchema,
  secret: z.string().min(1).optional(),
  eventTypes: z.array(z.string()).optional(),
  maxAttempts: z.number().int().min(1).max(20).optional(),
  delayMs: z.number().int().min(0).optional(),
  /** Send every event twice (a retry the receiver already accepted). */
  duplicate: z.boolean().optional(),
  /** Send each batch of events in reverse order. */
  outOfOrder: z.boolean().optional(),
});
export type WebhookConfigInput = z.infer<typeof WebhookConfigInputSchema>;

export interface WebhookConfig extends WebhookConfigInput {
  id: string;
  maxAttempts: number;
  delayMs: number;
}

export interface WebhookEventRec {
  id: string;
  type: "member_update";
  payload: { id: string };
  createdAt: string;
}

export interface DeliveryAttempt {
  at: string;
  status: number | null;
  error: string | null;
}

export interface DeliveryRecord {
  id: string;
  eventId: string;
  configId: string;
  /** `pending` until the first attempt ends; `failed` with `final: false` while a retry is scheduled. */
  state: "pending" | "successful" | "failed";
  final: boolean;
  manual: boolean;
  attempts: DeliveryAttempt[];
  createdAt: string;
}

/** HMAC-SHA256 of the raw body, lowercase hex: the value of `X-Service-Signature`. */
export function signBody(secret: string, body: string): string {
  return createHmac("sha256", secret).update(body).digest("hex");
}

function authHeaders(auth: WebhookAuth): Record<string, string> {
  if (auth.type === "apiKey") return { [(auth.header ?? "x-api-key").toLowerCase()]: auth.key };
  if (auth.type === "basic") return { authorization: `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString("base64")}` };
  return { authorization: `Bearer ${auth.token}` };
}

export class WebhookSender {
  private readonly configList: WebhookConfig[] = [];
  private readonly eventMap = new Map<string, WebhookEventRec>();
  private readonly deliveryList: DeliveryRecord[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  /** One delivery at a time per configuration: the order of sending is the order decided in emit(). */
  private readonly limits = new Map<string, ReturnType<typeof pLimit>>();
  private inFlight = 0;
  private waiters: (() => void)[] = [];
  private closed = false;

  constructor(
    private readonly rng: Rng,
    private readonly defaultDelayMs: number,
  ) {}

  /** Add an event configuration (validated; throws a ZodError on a bad one). */
  addConfig(input: unknown): WebhookConfig {
    const c = WebhookConfigInputSchema.parse(input);
    const cfg: WebhookConfig = { ...c, id: `whc_${randomUuid(this.rng).slice(0, 8)}`, maxAttempts: c.maxAttempts ?? 3, delayMs: c.delayMs ?? this.defaultDelayMs };
    this.configList.push(cfg);
    return cfg;
  }

  configs(): WebhookConfig[] {
    return this.configList.map((c) => ({ ...c, secret: c.secret ? "[set]" : undefined, auth: { ...c.auth, ...("key" in c.auth ? { key: "[set]" } : {}), ...("token" in c.auth ? { token: "[set]" } : {}), ...("password" in c.auth ? { password: "[set]" } : {}) } as WebhookAuth }));
  }

  deliveries(): DeliveryRecord[] {
    return this.deliveryList.map((d) => ({ ...d, attempts: [...d.attempts] }));
  }

  events(): WebhookEventRec[] {
    return [...this.eventMap.values()];
  }

  /** One `member_update` per member id, sent to every configuration. */
  emit(memberIds: readonly string[]): WebhookEventRec[] {
    if (this.closed || this.configList.length === 0 || memberIds.length === 0) return [];
    const events = memberIds.map((id) => {
      const ev: WebhookEventRec = { id: `evt_${randomUuid(this.rng)}`, type: "member_update", payload: { id }, createdAt: new Date().toISOString() };
      this.eventMap.set(ev.id, ev);
      return ev;
    });
    for (const cfg of this.configList) {
      if (cfg.eventTypes && !cfg.eventTypes.includes("member_update")) continue;
      const ordered = cfg.outOfOrder ? [...events].reverse() : events;
      for (const ev of ordered) {
        this.startDelivery(cfg, ev, false);
        if (cfg.duplicate) this.startDelivery(cfg, ev, false);
      }
    }
    return events;
  }

  /** Manual "Retry Event": new delivery records, same event id. Undefined when the event is unknown. */
  retry(eventId: string): DeliveryRecord[] | undefined {
    const ev = this.eventMap.get(eventId);
    if (!ev) return undefined;
    const configIds = new Set(this.deliveryList.filter((d) => d.eventId === eventId).map((d) => d.configId));
    return this.configList.filter((c) => configIds.has(c.id)).map((c) => this.startDelivery(c, ev, true));
  }

  private startDelivery(cfg: WebhookConfig, ev: WebhookEventRec, manual: boolean): DeliveryRecord {
    const rec: DeliveryRecord = { id: `dlv_${randomUuid(this.rng)}`, eventId: ev.id, configId: cfg.id, state: "pending", final: false, manual, attempts: [], createdAt: new Date().toISOString() };
    this.deliveryList.push(rec);
    this.attempt(cfg, ev, rec);
    return rec;
  }

  private attempt(cfg: WebhookConfig, ev: WebhookEventRec, rec: DeliveryRecord): void {
    this.inFlight++;
    let limit = this.limits.get(cfg.id);
    if (!limit) {
      limit = pLimit(1);
      this.limits.set(cfg.id, limit);
    }
    void limit(() => this.send(cfg, ev))
      .then((r) => {
        rec.attempts.push({ at: new Date().toISOString(), status: r.status, error: r.error });
        const ok = r.status !== null && r.status >= 200 && r.status < 300;
        rec.state = ok ? "successful" : "failed";
        if (ok || rec.attempts.length >= cfg.maxAttempts || this.closed) rec.final = true;
        else {
          const t = setTimeout(() => {
            this.timers.delete(t);
            this.inFlight--;
            this.attempt(cfg, ev, rec);
          }, cfg.delayMs);
          this.timers.add(t);
          return; // still in flight while a retry is scheduled
        }
        this.inFlight--;
        this.settle();
      });
  }

  private async send(cfg: WebhookConfig, ev: WebhookEventRec): Promise<{ status: number | null; error: string | null }> {
    const body = JSON.stringify({ id: ev.id, type: ev.type, payload: { id: ev.payload.id } });
    const headers: Record<string, string> = { "content-type": "application/json", ...authHeaders(cfg.auth) };
    if (cfg.secret) headers["x-service-signature"] = signBody(cfg.secret, body);
    try {
      const res = await request(cfg.url, { method: "POST", headers, body, headersTimeout: 10_000, bodyTimeout: 10_000 });
      await res.body.dump();
      return { status: res.statusCode, error: null };
    } catch (e) {
      const code = (e as { code?: string }).code;
      return { status: null, error: code ?? (e instanceof Error ? e.name : "error") };
    }
  }

  private settle(): void {
    if (this.inFlight > 0) return;
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /** Resolves when no delivery is in flight or waiting for a retry. */
  idle(): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  close(): void {
    this.closed = true;
    for (const t of this.timers) {
      clearTimeout(t);
      this.inFlight--;
    }
    this.timers.clear();
    this.settle();
  }
}
