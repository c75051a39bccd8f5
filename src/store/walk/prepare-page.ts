import { createHash, hash } from "node:crypto";
import { canonicalJson, type SsnMasker } from "./canonical.js";
import { maskPii, ssnMasker, type PiiMode } from "../pii/pii.js";
import { FieldScanner, type NewField } from "./field-paths.js";
import { ChildOf, WalkedResources, type StoredResource, type WalkedResource } from "../schema/resources.js";
import { mayHoldSsnShape } from "../../pii/ssn-key.js";
import { topLevelString } from "../../api/raw-items.js";

/** What both sides of the snapshot need to turn walked items into records: pure, no database. */
export interface EncodingOptions {
  readonly piiKey: Buffer;
  readonly piiMode?: PiiMode | undefined;
  /** The field that identifies each walked resource's items (api-shapes: configurable). */
  readonly idFields?: Partial<Record<WalkedResource, string>> | undefined;
}

/** One walked record, ready for the snapshot. */
export interface PreparedRecord {
  readonly id: string;
  /** The partition it belongs to, for proving deletes within a scope (a claim's group). */
  readonly part: string | null;
  /** A keyed hash of the text the server sent; null when it must not be trusted (a child was unreadable). */
  readonly fp: number | null;
  /**
   * The text the server sent (or the item as JSON), to parse again if the record needs a look.
   * Empty when the record was encoded up front: nothing parses it again, and the page crosses to
   * the store's thread without it.
   */
  readonly raw: string;
  /** Its canonical JSON, when encoded up front. */
  readonly canonical?: string;
  /** A stable hash of the canonical JSON (hex), with it. */
  readonly hash?: string;
  /** Its children's canonical JSON (with the parent's id), when encoded up front. */
  readonly children?: readonly PreparedChild[];
  /** How many children it lists; -1 when not yet read (the store counts the stored ones). */
  readonly childCount: number;
}

export interface PreparedChild {
  readonly id: string;
  readonly canonical: string;
  readonly hash: string;
}

/** An item (or a child of one) that cannot be stored, with a masked excerpt. */
export interface Problem {
  readonly id: string | null;
  readonly reason: string;
  readonly excerpt: string;
}

export interface PreparedPage {
  readonly records: readonly PreparedRecord[];
  readonly problems: readonly Problem[];
  /** Field paths the schemas do not name, first met on this page (see field-paths.ts). */
  readonly newFields?: readonly NewField[];
}

/**
 * Turns walked items into records: validation, fingerprints, SSN masking and canonical JSON.
 * Pure, so it runs on the walk's thread while SQLite works on its own.
 */
export class Encoder {
  readonly masker: SsnMasker | undefined;
  private readonly fpSecret: string;
  private readonly pageSecret: Buffer;
  /** Every record this encoder parses is scanned here, where it is parsed anyway. */
  readonly fields: FieldScanner;

  constructor(readonly options: EncodingOptions) {
    const mode = options.piiMode ?? "token";
    this.masker = mode === "keep" ? undefined : ssnMasker(options.piiKey);
    this.fields = new FieldScanner({ masking: this.masker !== undefined });
    this.fpSecret = `${options.piiKey.toString("hex")}:${mode}:`;
    this.pageSecret = Buffer.from(`${this.fpSecret}page:`);
  }

  idField(resource: WalkedResource): string {
    return this.options.idFields?.[resource] ?? "id";
  }

  /**
   * A keyed hash of a whole page as the server sent it, over its bytes (the chunks they arrived in,
   * in order): a page the snapshot already holds is recognised without being joined or decoded. 48 bits.
   */
  pageFingerprint(chunks: readonly Uint8Array[]): number {
    const h = createHash("sha256").update(this.pageSecret);
    for (const c of chunks) h.update(c);
    return h.digest().readUIntBE(0, 6);
  }

  /** A keyed hash of a record's text: the PII key makes it useless for guessing an SSN. 48 bits. */
  fingerprint(text: string): number {
    // The first 6 bytes as a number, read from hex: a Buffer per record costs more than the hash.
    return parseInt(hash("sha256", this.fpSecret + text, "hex").slice(0, 12), 16);
  }

  /**
   * The top-level fields of a stored resource that hold the record's own id (and a child's parent
   * key): the SSN rule leaves them alone.
   */
  ownIdFields(resource: StoredResource): readonly string[] {
    if ((WalkedResources as readonly string[]).includes(resource)) return [this.idField(resource as WalkedResource)];
    const spec = Object.values(ChildOf).find((c) => c.child === resource);
    return spec ? ["id", spec.parentKey] : ["id"];
  }

  /**
   * Whether a record's strings need the SSN shape look: asked once per record, of the raw text it
   * came as (`mayHoldSsnShape`, a few `indexOf`s), so the common record's strings are never looked at.
   */
  shapesIn(raw: string): boolean {
    return this.masker !== undefined && mayHoldSsnShape(raw);
  }

  private encoded(resource: WalkedResource, rec: Record<string, unknown>, shapes: boolean): { canonical: string; hash: string } {
    this.fields.scan(resource, rec);
    const canonical = this.encodeParent(resource, rec, shapes);
    return { canonical, hash: versionHash(canonical) };
  }

  /** A parent's canonical JSON, without its children. `shapes`: whether a string may hold an SSN shape (`shapesIn`). */
  encodeParent(resource: WalkedResource, item: Record<string, unknown>, shapes = true): string {
    return canonicalJson(item, { maskSsn: this.masker, shapes, ids: [this.idField(resource)], omit: ChildOf[resource]?.field });
  }

  /** A parent's children, each with the parent's id; unreadable ones become problems. */
  encodeChildren(
    resource: WalkedResource,
    parentId: string,
    item: Record<string, unknown>,
    shapes = true,
  ): { children: PreparedChild[]; problems: Problem[] } {
    const spec = ChildOf[resource];
    const children: PreparedChild[] = [];
    const problems: Problem[] = [];
    if (!spec) return { children, problems };
    const seen = new Set<string>();
    for (const child of childList(item, spec.field)) {
      const problem = itemProblem(child, "id");
      if (problem) {
        problems.push(this.problem(child, "id", `${spec.child}: ${problem}`, parentId));
        continue;
      }
      const c = child as Record<string, unknown>;
      const id = c.id as string;
      if (seen.has(id)) continue;
      seen.add(id);
      const canonical = canonicalJson(c, { maskSsn: this.masker, shapes, ids: ["id"], extra: [spec.parentKey, parentId] });
      children.push({ id, canonical, hash: versionHash(canonical) });
    }
    return { children, problems };
  }

  /**
   * Validate, fingerprint and (with `encode`) canonicalise a page's items. Without `encode`, only
   * what the fast path needs is computed: a record whose fingerprint matches is never encoded.
   */
  prepare(resource: WalkedResource, items: readonly unknown[], raw: readonly string[] | undefined, encode: boolean): PreparedPage {
    const idField = this.idField(resource);
    const spec = ChildOf[resource];
    const records: PreparedRecord[] = [];
    const problems: Problem[] = [];
    items.forEach((item, i) => {
      const problem = itemProblem(item, idField, spec?.field);
      if (problem) {
        problems.push(this.problem(item, idField, problem));
        return;
      }
      const rec = item as Record<string, unknown>;
      const id = rec[idField] as string;
      const text = raw?.[i] ?? JSON.stringify(item);
      const childCount = spec ? (encode ? childList(rec, spec.field).length : -1) : 0;
      const shapes = encode && this.shapesIn(text);
      // Without `encode`, children are left to `materialize`, for the records that need a look.
      const kids = spec && encode ? this.encodeChildren(resource, id, rec, shapes) : undefined;
      problems.push(...(kids?.problems ?? []));
      // A parent whose children cannot all be read gets no fingerprint: it is re-read next time.
      const fp = kids && kids.problems.length > 0 ? null : this.fingerprint(text);
      records.push({
        id,
        part: partOf(resource, rec),
        fp,
        raw: encode ? "" : text,
        childCount,
        ...(encode ? { ...this.encoded(resource, rec, shapes), ...(kids ? { children: kids.children } : {}) } : {}),
      });
    });
    const newFields = this.fields.drain();
    return newFields.length > 0 ? { records, problems, newFields } : { records, problems };
  }

  /**
   * The fast path's preparation of items known only by their text and id: a fingerprint each,
   * and a claim's group read from the text. Nothing is parsed; a record whose fingerprint does not
   * match is parsed later, where it is stored.
   */
  prepareLazy(resource: WalkedResource, ids: readonly string[], raw: readonly string[]): PreparedRecord[] {
    return ids.map((id, i) => {
      const text = raw[i]!;
      const part = resource === "claims" ? topLevelString(text, "groupId") ?? null : null;
      return { id, part, fp: this.fingerprint(text), raw: text, childCount: ChildOf[resource] ? -1 : 0 };
    });
  }

  /**
   * Finish a lazily prepared record that needs a look after all: parse, validate and encode it
   * (with its children). Unreadable parts become problems; an unreadable child also takes away
   * the record's fingerprint, so that it is looked at again next time.
   */
  materialize(resource: WalkedResource, r: PreparedRecord): { record?: PreparedRecord; problems: Problem[] } {
    if (r.canonical !== undefined) return { record: r, problems: [] };
    let item: unknown;
    try {
      item = JSON.parse(r.raw);
    } catch {
      item = null;
    }
    const idField = this.idField(resource);
    const spec = ChildOf[resource];
    const problem = itemProblem(item, idField, spec?.field);
    if (problem) return { problems: [this.problem(item, idField, problem)] };
    const rec = item as Record<string, unknown>;
    const shapes = this.shapesIn(r.raw);
    const kids = spec ? this.encodeChildren(resource, r.id, rec, shapes) : undefined;
    const problems = kids?.problems ?? [];
    return {
      record: {
        ...r,
        fp: problems.length > 0 ? null : r.fp,
        ...this.encoded(resource, rec, shapes),
        childCount: spec ? childList(rec, spec.field).length : 0,
        ...(kids ? { children: kids.children } : {}),
      },
      problems,
    };
  }

  problem(item: unknown, idField: string, reason: string, parentId?: string): Problem {
    const masked = maskPii(item, this.options.piiKey, this.options.piiMode ?? "token");
    const id = item !== null && typeof item === "object" ? (item as Record<string, unknown>)[idField] : undefined;
    return { id: typeof id === "string" ? id : parentId ?? null, reason, excerpt: JSON.stringify(masked ?? null).slice(0, 500) };
  }
}

/**
 * The stable hash of a version: SHA-256 of its canonical JSON (keys sorted, SSNs masked), first
 * 16 bytes in hex. Key order and page order change nothing; the snapshot compares the canonical
 * JSON itself, so the hash is for users (join, dedupe, compare across systems).
 */
export function versionHash(canonical: string): string {
  return hash("sha256", canonical, "hex").slice(0, 32);
}

/** A parent's list of children (absent or null: none). */
export function childList(record: Record<string, unknown>, field: string): unknown[] {
  const list = record[field];
  return Array.isArray(list) ? list : [];
}

/** Why an item cannot be stored, or undefined when it can. */
export function itemProblem(item: unknown, idField: string, childField?: string): string | undefined {
  if (item === null || typeof item !== "object" || Array.isArray(item)) return "the item is not a JSON object";
  const id = (item as Record<string, unknown>)[idField];
  if (id === undefined || id === null) return `the item has no ${idField}`;
  if (typeof id !== "string" || id.length === 0) return `the item's ${idField} is not a non-empty string`;
  if (childField !== undefined) {
    const children = (item as Record<string, unknown>)[childField];
    if (children !== undefined && children !== null && !Array.isArray(children)) return `the item's ${childField} is not a list`;
  }
  return undefined;
}

/** The partition a record belongs to, for proving deletes within a scope. */
function partOf(resource: WalkedResource, record: Record<string, unknown>): string | null {
  if (resource === "claims") return typeof record.groupId === "string" ? record.groupId : null;
  return null;
}
