import type { Sandbox, ChangeSet } from "../../src/sandbox/index.js";
import type { MemoryData } from "./memory-source.js";

/** Everything the sandbox serves, as plain data (small sandboxes only: it is all in memory). */
export function sandboxData(sb: Sandbox): MemoryData {
  const all = <T,>(it: Iterable<T>) => [...it].map((x) => JSON.parse(JSON.stringify(x)) as Record<string, unknown>);
  return { designs: all(sb.iterate("designs")), groups: all(sb.iterate("groups")), members: all(sb.iterate("members")), claims: all(sb.iterate("claims")) };
}

/** A sandbox change set as sorted `resource op id` strings, the form `recordedChanges` returns. */
export function changeSetLines(cs: ChangeSet): string[] {
  const out: string[] = [];
  for (const [resource, c] of Object.entries(cs.changes)) {
    for (const id of c.inserted) out.push(`${resource} insert ${id}`);
    for (const id of c.updated) out.push(`${resource} update ${id}`);
    for (const id of c.deleted) out.push(`${resource} delete ${id}`);
  }
  return out.sort();
}

/** A claims window wide enough to hold every claim the sandbox generates. */
export const ALL_CLAIMS = { from: "1900-01-01", to: "2999-12-31" } as const;
