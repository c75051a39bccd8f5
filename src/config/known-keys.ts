/** The keys a strict object of the schema accepts at a path, for "did you mean" suggestions. */
import type { z } from "zod";

interface DefLike {
  type: string;
  in?: { _zod: { def: DefLike } };
  innerType?: { _zod: { def: DefLike } };
  shape?: Record<string, { _zod: { def: DefLike } }>;
}

/** @example keysAt(Config, ["http"]) // ["concurrency", "requestsPerSecond", ...] */
export function keysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let def = unwrap((schema as unknown as { _zod: { def: DefLike } })._zod.def);
  for (const p of path) {
    const child = def.shape?.[String(p)];
    if (!child) return [];
    def = unwrap(child._zod.def);
  }
  return Object.keys(def.shape ?? {});
}

function unwrap(def: DefLike): DefLike {
  for (let i = 0; i < 10; i++) {
    const next = def.type === "pipe" ? def.in?._zod.def : def.innerType?._zod.def;
    if (!next) return def;
    def = next;
  }
  return def;
}
