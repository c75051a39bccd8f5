import { createClient, type ServiceClient } from "../../../src/api/index.js";
import type { Sandbox } from "../../../src/sandbox/index.js";

/** A client on the sandbox with fast retries (tests must stay quick). */
export function clientFor(sb: Sandbox, key: keyof Sandbox["keys"] = "full", extra: Partial<Parameters<typeof createClient>[0]> = {}): ServiceClient {
  return createClient({ baseUrl: sb.baseUrl, apiKey: sb.keys[key], retry: { maxAttempts: 3, baseMs: 5, capMs: 20 }, ...extra });
}

/** Every item of a full walk of one list resource, in walk order. */
export async function walk(client: ServiceClient, resource: "designs" | "groups" | "members" | "claims", filters: Record<string, string | undefined> = {}): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for await (const page of client.pages(resource, filters)) out.push(...(page.items as Record<string, unknown>[]));
  return out;
}
