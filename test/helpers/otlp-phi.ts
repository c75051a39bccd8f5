/**
 * The PHI scan of what an OTLP receiver got. Two readings, each with what it can honestly look for:
 *
 * - every decoded text (span and event names, attribute keys and values, status messages, the
 *   resource's and the scope's, metric names, units, descriptions and point attributes) for any
 *   SSN, any member's first or last name (as a word), email, id, subscriber or coverage id, and
 *   the keys;
 * - every request's bytes as they came, fields no decoder looked at included, for the SSNs (dashed
 *   or 9 digits), ids, emails and keys. Names are not looked for in bytes: a trace id's 16 random
 *   bytes hold a short capitalised word often enough across thousands of spans.
 */
import type { Sandbox } from "../../src/sandbox/index.js";
import type { OtlpReceiver } from "./otlp-receiver.js";
import { sandboxData } from "./sandbox-truth.js";

export interface Canaries {
  /** As 9 digits. */
  readonly ssns: ReadonlySet<string>;
  readonly names: ReadonlySet<string>;
  /** Ids of people and their coverages, emails, and the keys: none may appear anywhere. */
  readonly verbatim: ReadonlySet<string>;
}

/**
 * Everything of the sandbox's people that must not leave in telemetry, and the given secrets;
 * added to `into` when given. Call it before a simulated day too: a member the day deletes is
 * gone from the sandbox afterwards, and its id is exactly what a lookup would leak.
 */
export function sandboxCanaries(sb: Sandbox, secrets: readonly string[], into?: Canaries): Canaries {
  const ssns = new Set<string>(into?.ssns);
  const names = new Set<string>(into?.names);
  const verbatim = new Set<string>([...(into?.verbatim ?? []), ...secrets]);
  for (const m of sandboxData(sb).members) {
    const digits = String(m.ssn ?? "").replace(/\D/g, "");
    if (digits.length === 9) ssns.add(digits);
    for (const n of [m.firstName, m.lastName]) if (typeof n === "string" && n.length >= 2) names.add(n);
    for (const v of [m.id, m.subscriberId, m.email]) if (typeof v === "string" && v.length >= 6) verbatim.add(v);
    for (const c of (m.coverages ?? []) as { id?: string; subscriberCoverageId?: string }[]) {
      for (const v of [c.id, c.subscriberCoverageId]) if (typeof v === "string" && v.length >= 6) verbatim.add(v);
    }
  }
  return { ssns, names, verbatim };
}

/** Every text of the decoded spans and metrics, each with where it was. */
export function telemetryTexts(rx: OtlpReceiver): [string, string][] {
  const out: [string, string][] = [];
  const add = (where: string, v: unknown): void => {
    if (Array.isArray(v)) v.forEach((x) => add(where, x));
    else if (v !== undefined && v !== null) out.push([where, String(v)]);
  };
  const attrs = (where: string, a: Record<string, unknown>) => Object.entries(a).forEach(([k, v]) => (add(`${where} key`, k), add(`${where} ${k}`, v)));
  for (const s of rx.spans) {
    add("span name", s.name);
    add("scope", s.scope);
    add("status message", s.status.message);
    attrs(`span ${s.name}`, s.attributes);
    attrs("resource", s.resource);
    for (const e of s.events) (add("event name", e.name), attrs(`event ${e.name}`, e.attributes));
  }
  for (const m of rx.metrics) {
    for (const t of [m.name, m.unit, m.description]) add("metric", t);
    attrs("resource", m.resource);
    for (const p of m.points) attrs(`metric ${m.name}`, p.attributes);
  }
  return out;
}

/** What of `c` is in the texts and the bytes: empty when clean. */
export function phiFindings(texts: readonly [string, string][], bodies: readonly Buffer[], c: Canaries): string[] {
  const found: string[] = [];
  const ssnLike = /(?<!\d)\d{3}[\s\u00a0\u2010-\u2015\u2212-]?\d{2}[\s\u00a0\u2010-\u2015\u2212-]?\d{4}(?!\d)/g;
  const look = (where: string, text: string, names: boolean) => {
    for (const m of text.matchAll(ssnLike)) if (c.ssns.has(m[0].replace(/\D/g, ""))) found.push(`an SSN in ${where}`);
    for (const v of c.verbatim) if (text.includes(v)) found.push(`${v.slice(0, 4)}… in ${where}`);
    if (names) for (const w of text.split(/[^\p{L}'-]+/u)) if (c.names.has(w)) found.push(`the name ${w} in ${where}`);
  };
  for (const [where, text] of texts) look(where, text, true);
  bodies.forEach((b, i) => look(`request ${i}'s bytes`, b.toString("latin1"), false));
  return found;
}
