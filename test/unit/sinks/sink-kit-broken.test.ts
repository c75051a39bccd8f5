/**
 * The sink kit's checks can fail: a sink kept in memory passes them all (taking runs one by one
 * or all at once), and each of four broken versions of it fails the check written for its flaw,
 * with a message that says what the output held.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { Sink } from "../../../src/sinks/sink.js";
import { docPage } from "../../helpers/readme-blocks.js";
import { sinkChecks, SinkCheckError, type HeldRun, type SinkCheck, type SinkSubject } from "../../../src/testing/index.js";

type Flaw =
  | "none"
  | "appends" // re-delivery appends the runs again
  | "writes-through" // write lands at once; close undoes nothing
  | "always-arrived" // arrived() says yes to anything
  | "last-run-only"; // a delivery of several runs keeps only the last

/** A sink whose output is an array: committed runs with their change counts. */
function memorySubject(flaw: Flaw, perRun = false): SinkSubject<number> {
  const outputs = new Map<string, HeldRun[]>();
  let n = 0;
  return {
    create(): Sink<number> {
      const output = `memory:${++n}`;
      const held: HeldRun[] = [];
      outputs.set(output, held);
      const has = (r: number) => held.some((h) => h.runId === r);
      return {
        output,
        describe: `memory output ${n}`,
        perRun,
        arrived: (d) => flaw === "always-arrived" || d.runs.every(has),
        open(plan) {
          const runs = flaw === "last-run-only" ? plan.runs.slice(-1) : plan.runs;
          const counts = new Map<number, number>();
          const count = (r: number) => {
            if (flaw !== "writes-through") counts.set(r, (counts.get(r) ?? 0) + 1);
            else held.push({ runId: r, changes: 1 });
          };
          return {
            write(_resource, deltas) {
              for (const d of deltas(runs)) count(d.runId);
            },
            commit() {
              const fresh = runs.filter((r) => flaw === "appends" || !has(r));
              for (const r of fresh) if (counts.has(r)) held.push({ runId: r, changes: counts.get(r)! });
              return fresh.length;
            },
            close() {
              counts.clear();
            },
          };
        },
      };
    },
    held: (sink) => outputs.get(sink.output)!,
  };
}

const check = (name: string): SinkCheck => sinkChecks.find((c) => c.name === name)!;

describe("the sink kit's checks", () => {
  it("are four, by name, in a fixed order (a runner names its tests after them), each in docs/sink-kit.md", () => {
    expect(sinkChecks.map((c) => c.name)).toEqual([
      "each run is delivered once",
      "a delivery sent again changes nothing",
      "a failed delivery leaves its runs pending",
      "an interrupted delivery is settled by the next one",
    ]);
    // docs/sink-kit.md's table names each.
    const page = readFileSync(docPage("sink-kit.md"), "utf8");
    for (const c of sinkChecks) expect(page).toContain(`\n| ${c.name} | `);
  });

  for (const perRun of [false, true]) {
    for (const c of sinkChecks) {
      it(`pass for a correct sink (${perRun ? "each run on its own" : "all pending runs at once"}): ${c.name}`, async () => {
        await c.run(memorySubject("none", perRun));
      });
    }
  }

  const fails: [Flaw, string, RegExp][] = [
    ["last-run-only", "each run is delivered once", /after delivering runs 2 \(failed, with changes\) and 3: the output does not hold exactly the delivered runs, each once and whole: run 2 is missing \(the ledger records it delivered: its \d+ changes are lost\)/],
    ["appends", "a delivery sent again changes nothing", /after run 1 was delivered twice: .*run 1 is there more than once \(2 entries/],
    ["writes-through", "a failed delivery leaves its runs pending", /after a delivery up to run 2 failing half written: .*run 2 is there \(1 changes\) though the ledger does not record it delivered: a delivery that failed left it behind/],
    ["always-arrived", "an interrupted delivery is settled by the next one", /run 2's delivery died before its commit, yet arrived\(\) said it had arrived: its runs were recorded delivered without reaching the output/],
  ];
  for (const [flaw, name, message] of fails) {
    it(`"${name}" fails for a sink whose flaw is ${flaw}, and says what it saw`, async () => {
      const error = await check(name).run(memorySubject(flaw)).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(SinkCheckError);
      expect((error as SinkCheckError).check).toBe(name);
      expect((error as Error).message).toMatch(new RegExp(`^sink check "${name}": `));
      expect((error as Error).message).toMatch(message);
    });
  }
});
