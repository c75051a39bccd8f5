/**
 * Telling a run's new field paths (src/store/field-paths.ts) once: the run that first saw them
 * says so, and the snapshot's `new_fields` table keeps them for `doctor`, the metrics and later.
 */
import { newFieldsInFile } from "../store/new-fields.js";

export interface NewFieldPath {
  readonly resource: string;
  readonly path: string;
}

/** The field paths run `runId` was the first to see. */
export function newFieldsOfRun(dbPath: string, runId: number): NewFieldPath[] {
  return (newFieldsInFile(dbPath, runId) ?? []).map((r) => ({ resource: r.resource, path: r.path }));
}

/** One line naming each new path by resource (paths only: no value is ever kept). */
export function newFieldsText(fields: readonly NewFieldPath[]): string {
  const by = new Map<string, string[]>();
  for (const f of fields) by.set(f.resource, [...(by.get(f.resource) ?? []), f.path]);
  return [...by].map(([r, paths]) => `${r}: ${paths.join(", ")}`).join("; ");
}

/** The notice of the run that first saw new fields. */
export function newFieldsNotice(runId: number, fields: readonly NewFieldPath[]): string {
  return (
    `The service sent ${fields.length} field${fields.length === 1 ? "" : "s"} benefits-sync does not know, first seen in run ${runId} ` +
    `(${newFieldsText(fields)}). They are stored as sent; \`benefits-sync doctor\` lists them.`
  );
}
