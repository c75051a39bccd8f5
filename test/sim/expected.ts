/**
 * What the snapshot must hold for the model, worked out here and not by the product's code: the
 * oracle of the `final-state` invariant. An SSN field is one of the keys the model served SSNs
 * under (phi-keys.ts), not whatever the product's rule says; its token is HMAC-SHA256 of the
 * digits under the key, hex, computed with node:crypto. A product that masks with another key,
 * misses a key or masks one it should not, differs from this.
 */
import { createHmac } from "node:crypto";
import { norm } from "../helpers/expected.js";
import type { ServiceModel } from "./model.js";
import { SSN_KEYS } from "./phi-keys.js";

export type ExpectedState = Record<"designs" | "groups" | "plans" | "members" | "coverages", Map<string, unknown>>;

/** `[last4, token]` of one SSN field; a list of SSNs (the model's `memberSSNs`) gives a list of each, element by element. A value that is not text is dropped: the README's rule keeps no plain value of an SSN key. */
export function expectedMask(value: unknown, key: Buffer): [unknown, unknown] {
  if (Array.isArray(value)) {
    const each = value.map((v) => expectedMask(v, key));
    return [each.map((e) => e[0]), each.map((e) => e[1])];
  }
  if (typeof value !== "string" || value === "") return [null, null];
  const digits = value.replace(/\D/g, "");
  return [digits.slice(-4), createHmac("sha256", key).update(digits).digest("hex")];
}

/** The record with each SSN field replaced by `<key>_last4` and `<key>_token`, at any depth. */
export function expectedMasked(value: unknown, key: Buffer): unknown {
  if (Array.isArray(value)) return value.map((v) => expectedMasked(v, key));
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (SSN_KEYS.has(k)) [out[`${k}_last4`], out[`${k}_token`]] = expectedMask(v, key);
    else out[k] = expectedMasked(v, key);
  }
  return out;
}

/** The current rows the snapshot should have for the model (claims apart: see checkFinalState). */
export function expectedState(model: ServiceModel, key: Buffer): ExpectedState {
  const s: ExpectedState = { designs: new Map(), groups: new Map(), plans: new Map(), members: new Map(), coverages: new Map() };
  for (const d of model.designs) s.designs.set(d.id, norm(d));
  for (const g of model.groups) {
    const { plans, ...rest } = g;
    s.groups.set(g.id, norm(rest));
    for (const p of plans) s.plans.set(p.id, norm({ ...p, groupPolicyId: g.id }));
  }
  for (const m of model.members.values()) {
    const { coverages, ...rest } = m;
    s.members.set(m.id, norm(expectedMasked(rest, key)));
    for (const c of coverages) s.coverages.set(c.id, norm({ ...(expectedMasked(c, key) as object), memberId: m.id }));
  }
  return s;
}
