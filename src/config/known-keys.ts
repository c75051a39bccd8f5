/** The keys a strict object of the schema accepts at a path, for "did you mean" suggestions. */
import type { z } from "zod";

interface DefLike {
  type: string;
  in?: { _zod: { def: DefLike } };
  innerType?: { _zod: { def: DefLike } };
  shape?: Record<string, { _zod: { def: DefLike } }>;
  /** A record's values (`jobs.NAME`, `sinks.NAME`): any key leads to them. */
  valueType?: { _zod: { def: DefLike } };
  /** A union's options (a sink's three types): the keys of every one. */
  options?: readonly { _zod: { def: DefLike } }[];
}

/**
 * @example
 * keysAt(Config, ["http"]) // ["concurrency", "requestsPerSecond", ...]
 * keysAt(Config, ["jobs", "weekly-full-walk"]) // ["enabled", "schedule", "timezone", "sinks", "heartbeatUrl"]
 */
export function keysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  return keysOf((schema as unknown as { _zod: { def: DefLike } })._zod.def, path);
}

function keysOf(d: DefLike, path: readonly PropertyKey[]): string[] {
  const def = unwrap(d);
  if (def.options) return [...new Set(def.options.flatMap((o) => keysOf(o._zod.def, path)))];
  if (path.length === 0) return Object.keys(def.shape ?? {});
  const child = def.valueType ?? def.shape?.[String(path[0])];
  return child ? keysOf(child._zod.def, path.slice(1)) : [];
}

function unwrap(def: DefLike): DefLike {
  for (let i = 0; i < 10; i++) {
    const next = def.type === "pipe" ? def.in?._zod.def : def.innerType?._zod.def;
    if (!next) return def;
    def = next;
  }
  return def;
}
