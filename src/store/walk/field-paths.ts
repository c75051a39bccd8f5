/**
 * New field paths. The service may add fields within a version without notice (spec): a path is
 * "new" when the zod schemas in schemas/ do not name it, so a user hears of each field the sync
 * stores without having been written for it. Only key names are kept, never a value: a key that
 * does not look like a field name (an id, an SSN used as a key) is written `*`, and nothing below
 * an unknown key is looked at (the unknown key is the news). The scan runs on every parsed record
 * of a walk, so it only compares keys with a tree of known ones; a path is built only when new.
 */
import type { z } from "zod";
import { MedicalClaim } from "../../../schemas/claim.js";
import { Design } from "../../../schemas/design.js";
import { Group } from "../../../schemas/group.js";
import { Member } from "../../../schemas/member.js";
import { maskedAs, type MaskedAs } from "./field-masking.js";
import type { WalkedResource } from "../schema/resources.js";

/** The known keys below a point of a record; `any` when the schema allows every key there. */
interface Known {
  readonly keys: Map<string, Known>;
  any: boolean;
}

/** At most this many new paths per resource are reported by one scanner (a run). */
const MAX_NEW_PER_RESOURCE = 50;
const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;

interface ZodDef {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  element?: z.ZodType;
  options?: z.ZodType[];
  in?: z.ZodType;
  getter?: () => z.ZodType;
}

/** Merge what `schema` allows into `into`: objects by key, arrays by their element, unions by every option. */
function learn(schema: z.ZodType, into: Known): void {
  const def = (schema as unknown as { _zod: { def: ZodDef } })._zod.def;
  switch (def.type) {
    case "object":
      for (const [k, v] of Object.entries(def.shape ?? {})) {
        let child = into.keys.get(k);
        if (!child) into.keys.set(k, (child = { keys: new Map(), any: false }));
        learn(v, child);
      }
      return;
    case "optional":
    case "nullable":
    case "default":
    case "prefault":
    case "readonly":
    case "catch":
    case "nonoptional":
      return learn(def.innerType!, into);
    case "array":
      return learn(def.element!, into);
    case "union":
      for (const o of def.options ?? []) learn(o, into);
      return;
    case "pipe":
      return learn(def.in!, into);
    case "lazy":
      return learn(def.getter!(), into);
    case "record":
    case "unknown":
    case "any":
      into.any = true;
      return;
    default:
      return;
  }
}

function knownOf(schema: z.ZodType): Known {
  const k: Known = { keys: new Map(), any: false };
  learn(schema, k);
  return k;
}

const KNOWN: Record<WalkedResource, Known> = {
  designs: knownOf(Design),
  groups: knownOf(Group),
  members: knownOf(Member),
  claims: knownOf(MedicalClaim),
};

/** One new field path of a resource, as the snapshot keeps it, with what the SSN rule made of it. */
export interface NewField {
  readonly resource: WalkedResource;
  readonly path: string;
  /** How the snapshot masked the field (field-masking.ts); absent when it is stored as sent. */
  readonly masked?: MaskedAs;
}

/**
 * Collects the new field paths of the records it is shown, each once, with what the SSN rule made
 * of the field where it was first seen (asked once per path; `masking: false` for a snapshot that
 * keeps SSNs as sent, `--pii keep`). Records are scanned as served, before masking.
 * @example const s = new FieldScanner(); s.scan("members", rec); s.drain() // [{ resource: "members", path: "taxpayerId", masked: "name" }]
 */
export class FieldScanner {
  private readonly reported = new Map<WalkedResource, Set<string>>();
  private pending: NewField[] = [];
  private readonly masking: boolean;

  constructor(opts: { readonly masking?: boolean } = {}) {
    this.masking = opts.masking ?? true;
  }

  scan(resource: WalkedResource, record: Record<string, unknown>): void {
    this.walk(resource, record, KNOWN[resource], "");
  }

  /** The paths found since the last drain. */
  drain(): NewField[] {
    const out = this.pending;
    this.pending = [];
    return out;
  }

  private walk(resource: WalkedResource, obj: Record<string, unknown>, known: Known, prefix: string): void {
    if (known.any) return;
    for (const key in obj) {
      const below = known.keys.get(key);
      if (below === undefined) {
        this.found(resource, `${prefix}${FIELD_NAME.test(key) ? key : "*"}`, key, obj);
        continue;
      }
      if (below.keys.size === 0 && !below.any) continue;
      const v = obj[key];
      if (v === null || typeof v !== "object") continue;
      if (Array.isArray(v)) {
        for (const el of v) if (el !== null && typeof el === "object" && !Array.isArray(el)) this.walk(resource, el as Record<string, unknown>, below, `${prefix}${key}[].`);
      } else {
        this.walk(resource, v as Record<string, unknown>, below, `${prefix}${key}.`);
      }
    }
  }

  private found(resource: WalkedResource, path: string, key: string, parent: Record<string, unknown>): void {
    let seen = this.reported.get(resource);
    if (!seen) this.reported.set(resource, (seen = new Set()));
    if (seen.has(path) || seen.size >= MAX_NEW_PER_RESOURCE) return;
    seen.add(path);
    const masked = this.masking ? maskedAs(key, parent[key], parent) : undefined;
    this.pending.push(masked ? { resource, path, masked } : { resource, path });
    if (this.masking && !masked) this.inside(resource, parent[key], path, seen, 0);
  }

  /**
   * A new object or list the rule masked something in (`governmentIds: [{type: "SSN", value}]`,
   * `benefitsContact: {ssn}`): each masked path below it is named too, so the notice says what was
   * masked and where (`governmentIds[].value`). Asked once, with the path's first value.
   */
  private inside(resource: WalkedResource, v: unknown, path: string, seen: Set<string>, depth: number): void {
    if (v === null || typeof v !== "object" || depth >= MAX_INSIDE_DEPTH) return;
    if (Array.isArray(v)) {
      for (const el of v) this.inside(resource, el, `${path}[]`, seen, depth + 1);
      return;
    }
    const obj = v as Record<string, unknown>;
    for (const key in obj) {
      const sub = `${path}.${FIELD_NAME.test(key) ? key : "*"}`;
      if (seen.has(sub) || seen.size >= MAX_NEW_PER_RESOURCE) continue;
      const masked = maskedAs(key, obj[key], obj);
      if (masked) {
        seen.add(sub);
        this.pending.push({ resource, path: sub, masked });
      } else this.inside(resource, obj[key], sub, seen, depth + 1);
    }
  }
}

// How deep below a new field the masked paths are looked for: a bound on what a server can make us walk.
const MAX_INSIDE_DEPTH = 6;
