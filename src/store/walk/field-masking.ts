/**
 * What the SSN rule made of one field, for the new-fields notice (src/store/walk/field-paths.ts asks it
 * once per new path, never per record): an SSN by its name (`name`), the value of a typed pair
 * (`typed`, `{type: "SSN", value: "…"}`), or an SSN shape in its text (`text`). The rule itself is
 * ssn-key.ts; beyond `isSsnKey`, this asks the canonical writer what it writes, so the answer is
 * what the snapshot holds (a writer that does not yet mask typed pairs or text gives no marker).
 */
import { canonicalJson } from "./canonical.js";
import { ssnMasker } from "../pii/pii.js";
import { isSsnKey } from "../../pii/ssn-key.js";

export const MaskedMarkers = ["name", "typed", "text"] as const;
export type MaskedAs = (typeof MaskedMarkers)[number];

// Any key does: the probe's tokens are thrown away, only where the writer puts them matters.
const probe = ssnMasker(Buffer.alloc(32));

/**
 * How the canonical writer masks field `key` holding `value` in object `parent` (the object that
 * holds it, for a typed pair), or undefined when it stores the field as sent.
 *
 * @example maskedAs("taxpayerSsn", "123-45-6789") === "name"; maskedAs("preferredLanguage", "en") === undefined
 */
export function maskedAs(key: string, value: unknown, parent?: Readonly<Record<string, unknown>>): MaskedAs | undefined {
  if (isSsnKey(key) || writerMasks({ [key]: value }, key)) return "name";
  if (parent !== undefined && writerMasks(parent, key)) return "typed";
  const written = canonicalJson(value, { maskSsn: probe });
  if (written.includes("[ssn:") && written !== canonicalJson(value)) return "text";
  return undefined;
}

/** Whether the writer replaces `key` of `obj` by `<key>_token` (and `<key>_last4`). */
function writerMasks(obj: Readonly<Record<string, unknown>>, key: string): boolean {
  const written = JSON.parse(canonicalJson(obj, { maskSsn: probe })) as Record<string, unknown>;
  return !Object.hasOwn(written, key) && Object.hasOwn(written, `${key}_token`);
}
