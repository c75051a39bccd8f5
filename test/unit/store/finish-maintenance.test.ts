/**
 * Once a run's success is committed, what finishRun does after it (giving pages back with
 * `incremental_vacuum`, refreshing the planner's statistics with `optimize`) is upkeep: when it
 * fails (a disk that fills as the vacuum writes, seen by disk-full.test.ts on a loaded machine:
 * the sync exited 1 with DISK_FULL and "it resumes this run's walk", while the run was recorded
 * succeeded), the run stays a success and the next run does the upkeep again.
 */
import { describe, expect, it } from "vitest";
import { defaultDeletePolicy } from "../../../src/store/runs/run-state.js";
import { scopeOf } from "../../../src/store/walk/scopes.js";
import { applyPageInput } from "../../../src/store/snapshot-port.js";
import { useTempStores } from "../../helpers/temp-store.js";

const setup = useTempStores();

describe("after a run's success is committed", () => {
  it.each(["incremental_vacuum", "optimize"])("a failing %s leaves the run succeeded, in its report and in the history", (pragma) => {
    const t = setup();
    t.store.startRun("sync", {});
    const scope = scopeOf("members");
    t.store.beginScope(scope);
    applyPageInput(t.store, scope, { raw: [JSON.stringify({ id: "m1", firstName: "Ana" })], next: undefined, end: true });
    const real = t.db.pragma.bind(t.db);
    t.db.pragma = ((source: string, opts?: object) => {
      if (source === pragma) throw Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" });
      return real(source, opts as never);
    }) as typeof t.db.pragma;
    const report = t.store.finishRun(defaultDeletePolicy);
    t.db.pragma = real;
    expect(report.status).toBe("succeeded");
    expect(t.db.prepare("SELECT status FROM _runs WHERE run_id = 1").pluck().get()).toBe("succeeded");
  });
});
