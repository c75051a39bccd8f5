/**
 * The metrics textfile counts the field paths the service added without notice, per resource, so
 * an alert can fire on a change the run only said once. Every walked resource has its line (0
 * included): a rule on the gauge's increase needs the series before the first path appears.
 */
import { afterEach, describe, expect, it } from "vitest";
import { textfileMetrics } from "../../../src/jobs/telemetry.js";
import { tempStore, type TempStore } from "../../helpers/temp-store.js";

let t: TempStore | undefined;
afterEach(() => t?.cleanup());

/** A path as the run that first saw it recorded it (the table the sync writes). */
function seen(db: TempStore["db"], resource: string, path: string, runId: number, masked: string | null = null): void {
  db.prepare("INSERT INTO new_fields (resource, path, first_run_id, first_seen_at, masked) VALUES (?, ?, ?, ?, ?)").run(resource, path, runId, "2026-11-24T02:00:00.000Z", masked);
}

describe("the textfile's new field paths", () => {
  it("a gauge per resource, with its HELP and TYPE, 0 where none was seen", () => {
    t = tempStore();
    seen(t.db, "members", "preferredLanguage", 2);
    seen(t.db, "members", "benefitsContact", 2);
    seen(t.db, "claims", "lines[].modifier", 5);
    const text = textfileMetrics(t.db, []);
    expect(text).toContain("# HELP benefits_sync_new_field_paths ");
    expect(text).toContain("# TYPE benefits_sync_new_field_paths gauge\n");
    const lines = text.split("\n").filter((l) => l.startsWith("benefits_sync_new_field_paths{"));
    expect(lines).toEqual([
      'benefits_sync_new_field_paths{resource="designs"} 0',
      'benefits_sync_new_field_paths{resource="groups"} 0',
      'benefits_sync_new_field_paths{resource="members"} 2',
      'benefits_sync_new_field_paths{resource="claims"} 1',
    ]);
  });

  it("the paths the SSN rule masked, per resource and marker (name, typed, text), 0 where none", () => {
    t = tempStore();
    seen(t.db, "members", "preferredLanguage", 2);
    seen(t.db, "members", "taxpayerId", 2, "name");
    seen(t.db, "members", "address.socialSecurityNumber", 3, "name");
    seen(t.db, "claims", "notes", 3, "text");
    const text = textfileMetrics(t.db, []);
    expect(text).toContain("# HELP benefits_sync_new_field_paths_masked ");
    expect(text).toContain("# TYPE benefits_sync_new_field_paths_masked gauge\n");
    const lines = text.split("\n").filter((l) => l.startsWith("benefits_sync_new_field_paths_masked{"));
    expect(lines).toHaveLength(12);
    expect(lines).toEqual(expect.arrayContaining([
      'benefits_sync_new_field_paths_masked{resource="members",masked="name"} 2',
      'benefits_sync_new_field_paths_masked{resource="members",masked="typed"} 0',
      'benefits_sync_new_field_paths_masked{resource="claims",masked="text"} 1',
      'benefits_sync_new_field_paths_masked{resource="designs",masked="name"} 0',
    ]));
    // The count of every new path is unchanged: masked ones are among them.
    expect(text).toContain('benefits_sync_new_field_paths{resource="members"} 3\n');
  });
});
