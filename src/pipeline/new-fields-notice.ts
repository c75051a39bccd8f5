/**
 * Telling a run's new field paths (src/store/walk/field-paths.ts) once: the run that first saw them
 * says so, and the snapshot's `new_fields` table keeps them for `doctor`, the metrics and later.
 * A field the SSN rule masked says how, and what the snapshot holds in its place.
 */
import type { MaskedAs } from "../store/walk/field-masking.js";
import { newFieldsInFile } from "../store/walk/new-fields.js";

export interface NewFieldPath {
  readonly resource: string;
  readonly path: string;
  /** How the snapshot masked it (src/store/walk/field-masking.ts); null when it is stored as sent. */
  readonly masked: MaskedAs | null;
}

/** The field paths run `runId` was the first to see. */
export function newFieldsOfRun(dbPath: string, runId: number): NewFieldPath[] {
  return (newFieldsInFile(dbPath, runId) ?? []).map((r) => ({ resource: r.resource, path: r.path, masked: r.masked }));
}

/**
 * What masking made of a new field at `path`, in words; "" when it is stored as sent. A key that
 * does not look like a field name is recorded `*`, so its stored keys are named by their ending.
 *
 * @example maskedNote("taxpayerId", "name") // "an SSN by its name: stored as taxpayerId_token and taxpayerId_last4"
 */
export function maskedNote(path: string, masked: MaskedAs | null): string {
  const stored = path.endsWith("*") ? "stored as its key with _token and _last4" : `stored as ${path}_token and ${path}_last4`;
  switch (masked) {
    case "name":
      return `an SSN by its name: ${stored}`;
    case "typed":
      return `the SSN of a typed pair: ${stored}`;
    case "text":
      return "an SSN in its text: written [ssn:<token>] in place";
    default:
      return "";
  }
}

/** One line naming each new path by resource, and how each masked one was masked (paths only: no value is ever kept). */
export function newFieldsText(fields: readonly NewFieldPath[]): string {
  const by = new Map<string, string[]>();
  for (const f of fields) {
    const note = maskedNote(f.path, f.masked);
    by.set(f.resource, [...(by.get(f.resource) ?? []), note ? `${f.path} (${note})` : f.path]);
  }
  return [...by].map(([r, paths]) => `${r}: ${paths.join(", ")}`).join("; ");
}

/** The notice of the run that first saw new fields. */
export function newFieldsNotice(runId: number, fields: readonly NewFieldPath[]): string {
  const stored = fields.some((f) => f.masked) ? "They are stored as sent, but for what the SSN rule masked" : "They are stored as sent";
  return (
    `The service sent ${fields.length} field${fields.length === 1 ? "" : "s"} benefits-sync does not know, first seen in run ${runId} ` +
    `(${newFieldsText(fields)}). ${stored}; \`benefits-sync doctor\` lists them.`
  );
}
