/**
 * The analyst guide's questions as printed (README "Questions, answered in SQL" and
 * docs/analyst-guide.md), by name: the tests run them exactly as a reader would copy them.
 */
import { fileURLToPath } from "node:url";
import { groupedForms, guideQuestions as questionsAt } from "../../bench/guide-questions.js";
import { createClient } from "../../src/api/client.js";
import { startSandbox, type Sandbox } from "../../src/sandbox/sandbox.js";
import { tempStore, type TempStore } from "./temp-store.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** The guide's questions (README, then docs/analyst-guide.md). */
export function guideQuestions(): Map<string, string> {
  return questionsAt(ROOT);
}

/**
 * The guide's questions as a snapshot without the store's counts (schema 11 and before) answers
 * them: those that read the counts in their grouped form (bench/guide-questions.ts).
 */
export function guideQuestionsGrouped(): Map<string, string> {
  return new Map([...guideQuestions()].map(([name, sql]) => [name, groupedForms.get(name) ?? sql]));
}

/**
 * The guide tests' world: a sandbox whose data has every kind of answer (members in two groups,
 * claims outside their coverage), a client on it, and a snapshot; `cleanup` closes all three.
 */
export async function guideWorld(): Promise<{ sb: Sandbox; client: ReturnType<typeof createClient>; t: TempStore; cleanup: () => Promise<void> }> {
  const sb = await startSandbox({ members: 300, seed: 5, groups: 3 });
  const client = createClient({
    baseUrl: sb.baseUrl,
    apiKey: sb.keys.full,
    retry: { maxAttempts: 6, baseMs: 5, capMs: 50, retryAfterCapMs: 1000 },
    deadlines: { connectMs: 2000, headersMs: 2000, bodyMs: 2000 },
  });
  const t = tempStore();
  return {
    sb,
    client,
    t,
    cleanup: async () => {
      t.cleanup();
      await client.close();
      await sb.close();
    },
  };
}
