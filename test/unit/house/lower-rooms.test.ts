/**
 * The lower rooms do not reach up (issue 51, house style 19): the rules of `pii/` know nothing of
 * the store that applies them, the store nothing of the census, the sinks or the stages above it,
 * telemetry nothing of the store whose walks it traces, and the configuration nothing of the client
 * it configures. Each rule is a folder and the folders it may not import from; a file that breaks
 * one is printed with the import.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { importGraph } from "../../helpers/import-graph.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const Stages = ["src/eligibility/", "src/sinks/", "src/reports/", "src/pipeline/", "src/webhooks/", "src/onboarding/", "src/jobs/", "src/cli/", "src/testing/", "jobs/"];
const Rules: readonly { readonly room: string; readonly never: readonly string[]; readonly sample: readonly [string, string] }[] = [
  { room: "src/pii", never: ["src/store/", "src/api/", "src/config/", "src/telemetry/", ...Stages], sample: ["src/pii/ssn-key.ts", "src/pii/ssn-shape.ts"] },
  { room: "src/store", never: ["src/extract/", ...Stages], sample: ["src/store/snapshot.ts", "src/store/walk/page-apply.ts"] },
  { room: "src/telemetry", never: ["src/store/", "src/extract/", ...Stages], sample: ["src/telemetry/otel-sdk.ts", "src/telemetry/otel-env.ts"] },
  { room: "src/config", never: ["src/api/", "src/store/", "src/telemetry/", ...Stages], sample: ["src/config/resolve-service.ts", "src/config/environments.ts"] },
];

describe("lower rooms", () => {
  for (const rule of Rules) {
    it(`${rule.room}/ imports nothing of ${rule.never.join(", ")}`, () => {
      const graph = importGraph(root, rule.room);
      // The folder is really read, with its imports.
      expect(graph.get(rule.sample[0])).toContain(rule.sample[1]);
      const upward = [...graph].flatMap(([from, targets]) => targets.filter((t) => rule.never.some((n) => t.startsWith(n))).map((t) => `${from} -> ${t}`));
      expect(upward).toEqual([]);
    });
  }
});
