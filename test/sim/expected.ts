/**
 * What the snapshot must hold for the model, worked out here and not by the product's code: the
 * oracle of the `final-state` invariant. An SSN field is one of the keys the model served SSNs
 * under (phi-keys.ts), or the value of a typed pair whose type name is one the model drew as an
 * SSN, not whatever the product's rule says; its token is HMAC-SHA256 of the digits under the key,
 * hex, computed with node:crypto. An SSN in free text (3-2-4 digits, any of phi-keys.ts's
 * separators) becomes `[ssn:<token>]` in place. A product that masks with another key, misses a
 * key, a pair or a text, or masks one it should not (the pairs that are not SSNs), differs from this.
 */
import { createHmac } from "node:crypto";
import { norm } from "../helpers/expected.js";
import type { ServiceModel } from "./model.js";
import { SSN_KEYS, SSN_TYPES, TEXT_SEPARATORS, TYPE_KEYS, VALUE_KEYS } from "./phi-keys.js";

export type ExpectedState = Record<"designs" | "groups" | "plans" | "members" | "coverages", Map<string, unknown>>;

/** `[last4, token]` of one SSN field; a list of SSNs (the model's `memberSSNs`) gives a list of each, element by element. A value that is not text is dropped: the README's rule keeps no plain value of an SSN key. */
export function expectedMask(value: unknown, key: Buffer): [unknown, unknown] {
  if (Array.isArray(value)) {
    const each = value.map((v) => expectedMask(v, key));
    return [each.map((e) => e[0]), each.map((e) => e[1])];
  }
  const text = typeof value === "number" ? String(value) : value;
  if (typeof text !== "string" || text === "") return [null, null];
  const digits = text.replace(/\D/g, "");
  return [digits.slice(-4), token(digits, key)];
}

const token = (digits: string, key: Buffer) => createHmac("sha256", key).update(digits).digest("hex");
const SEP = `[${TEXT_SEPARATORS.map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join("")}]`;
const IN_TEXT = new RegExp(`(?<!\\d)\\d{3}${SEP}\\d{2}${SEP}\\d{4}(?!\\d)`, "g");

/** `text` with each SSN in it as `[ssn:<token>]`. */
export function expectedText(text: string, key: Buffer): string {
  return text.replace(IN_TEXT, (s) => `[ssn:${token(s.replace(/\D/g, ""), key)}]`);
}

/** The record with each SSN field (a key, a typed pair's value) replaced by `<key>_last4` and `<key>_token`, each SSN in text tokenised, at any depth. */
export function expectedMasked(value: unknown, key: Buffer): unknown {
  if (typeof value === "string") return expectedText(value, key);
  if (Array.isArray(value)) return value.map((v) => expectedMasked(v, key));
  if (value === null || typeof value !== "object") return value;
  const o = value as Record<string, unknown>;
  const typed = Object.keys(o).some((k) => TYPE_KEYS.has(k) && SSN_TYPES.has(o[k] as string));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) {
    if (SSN_KEYS.has(k) || (typed && VALUE_KEYS.has(k))) [out[`${k}_last4`], out[`${k}_token`]] = expectedMask(v, key);
    else out[expectedText(k, key)] = expectedMasked(v, key);
  }
  return out;
}

/** A claim as the snapshot should hold it. */
export function expectedClaim(claim: unknown, key: Buffer): unknown {
  return norm(expectedMasked(claim, key));
}

/** The current rows the snapshot should have for the model (claims apart: see checkFinalState). */
export function expectedState(model: ServiceModel, key: Buffer): ExpectedState {
  const s: ExpectedState = { designs: new Map(), groups: new Map(), plans: new Map(), members: new Map(), coverages: new Map() };
  const masked = (v: unknown) => norm(expectedMasked(v, key));
  for (const d of model.designs) s.designs.set(d.id, masked(d));
  for (const g of model.groups) {
    const { plans, ...rest } = g;
    s.groups.set(g.id, masked(rest));
    for (const p of plans) s.plans.set(p.id, masked({ ...p, groupPolicyId: g.id }));
  }
  for (const m of model.members.values()) {
    const { coverages, ...rest } = m;
    s.members.set(m.id, masked(rest));
    for (const c of coverages) s.coverages.set(c.id, masked({ ...c, memberId: m.id }));
  }
  return s;
}
