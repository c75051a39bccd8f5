/**
 * webhooks/ imports downward only (issue 42): the scheduler (src/jobs/: its loop, registry, job
 * runner and telemetry) and what calls down into webhooks/ (src/pipeline/, whose jobs the scheduler
 * runs, the CLI, and the job declarations in jobs/) stand above the receiver and its inbox. An
 * import of theirs from webhooks/ turns the stage order upside down: the receiver would then load,
 * and change with, the scheduler it is meant to run beside.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { importGraph } from "../../helpers/import-graph.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const Above = ["src/jobs/", "src/pipeline/", "src/cli/", "jobs/"];

describe("src/webhooks/", () => {
  it("imports nothing of the scheduler's modules nor of the layers above it", () => {
    const graph = importGraph(root, "src/webhooks");
    // The folder is really read, and its imports out of it with it.
    expect(graph.get("src/webhooks/receiver.ts")).toContain("src/errors.ts");
    const upward = [...graph].flatMap(([from, targets]) => targets.filter((t) => Above.some((a) => t.startsWith(a))).map((t) => `${from} -> ${t}`));
    expect(upward).toEqual([]);
  });
});
