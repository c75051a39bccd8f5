/**
 * The analyst guide's questions as printed (README "Questions, answered in SQL" and
 * docs/analyst-guide.md), by name: the tests run them exactly as a reader would copy them.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { createClient } from "../../src/api/client.js";
import { startSandbox, type Sandbox } from "../../src/sandbox/sandbox.js";
import { tempStore, type TempStore } from "./temp-store.js";

const README = fileURLToPath(new URL("../../README.md", import.meta.url));
// The README answers the first questions; the guide in docs/ the rest. One name, one place.
const GUIDE = fileURLToPath(new URL("../../docs/analyst-guide.md", import.meta.url));

/** Every ```sql block whose first line is `-- question: NAME`, by name. */
export function readmeQuestions(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of text.matchAll(/^```sql\r?\n([\s\S]*?)^```/gm)) {
    const sql = m[1]!;
    const name = /^-- question: ([a-z0-9]+(?:-[a-z0-9]+)*)\s*\r?\n/.exec(sql)?.[1];
    if (name === undefined) continue;
    if (out.has(name)) throw new Error(`README: question ${name} appears twice`);
    out.set(name, sql);
  }
  return out;
}

/** The guide's questions (README, then docs/analyst-guide.md). */
export function guideQuestions(): Map<string, string> {
  return readmeQuestions(`${readFileSync(README, "utf8")}\n${readFileSync(GUIDE, "utf8")}`);
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
