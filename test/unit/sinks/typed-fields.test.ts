import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { DecimalString, IsoDate, IsoTimestamp } from "../../../schemas/common.js";
import { MedicalClaim } from "../../../schemas/claim.js";
import { Design } from "../../../schemas/design.js";
import { Group, Plan } from "../../../schemas/group.js";
import { Coverage, Member } from "../../../schemas/member.js";
import { copyField, copyJson } from "../../../src/sinks/postgres/copy-text.js";
import { asCents, asDate, asDecimal, asEpochDay, asEpochMicros, asInstant, typedFields } from "../../../src/sinks/typed-fields.js";
import { StoredResources, type StoredResource } from "../../../src/store/schema/resources.js";

const SCHEMAS: Record<StoredResource, z.ZodType> = { designs: Design, groups: Group, plans: Plan, members: Member, coverages: Coverage, claims: MedicalClaim };

/** The schema of a dotted path, through optional/nullable wrappers and objects. */
function at(schema: z.ZodType, path: string): z.ZodType | undefined {
  let s: z.ZodType | undefined = schema;
  for (const k of path.split(".")) {
    s = unwrap(s!);
    const shape = (s as unknown as { shape?: Record<string, z.ZodType> }).shape;
    s = shape?.[k];
    if (!s) return undefined;
  }
  return unwrap(s!);
}
function unwrap(s: z.ZodType): z.ZodType {
  for (let i = 0; i < 5; i++) {
    const inner = (s as unknown as { _zod: { def: { innerType?: z.ZodType } } })._zod.def.innerType;
    if (!inner) return s;
    s = inner;
  }
  return s;
}

describe("the warehouse types of the documented fields", () => {
  it("follow the zod schemas: every IsoDate field is a date, every DecimalString a decimal, every IsoTimestamp a timestamp, the rest text", () => {
    let dates = 0;
    let decimals = 0;
    let timestamps = 0;
    for (const r of StoredResources) {
      for (const f of typedFields(r)) {
        const s = at(SCHEMAS[r], f.path);
        const expected = s === IsoDate ? "date" : s === DecimalString ? "decimal" : s === IsoTimestamp ? "timestamp" : "text";
        expect(`${r}.${f.path}: ${f.type}`).toBe(`${r}.${f.path}: ${expected}`);
        if (f.type === "date") dates++;
        if (f.type === "decimal") decimals++;
        if (f.type === "timestamp") timestamps++;
      }
    }
    expect(dates).toBe(10);
    expect(decimals).toBe(3);
    expect(timestamps).toBe(3);
  });

  it("an instant is read with its offset to the microsecond (a half to even, as PostgreSQL); anything else is null", () => {
    expect(asEpochMicros("1970-01-01T00:00:00Z")).toBe(0n);
    expect(asEpochMicros("2026-01-05T09:00:00.5-05:00")).toBe(BigInt(Date.parse("2026-01-05T14:00:00.500Z")) * 1000n);
    expect(asEpochMicros("2026-01-05 15:30:00+0130")).toBe(BigInt(Date.parse("2026-01-05T14:00:00Z")) * 1000n);
    expect(asEpochMicros("2026-01-05T14:00:00.0000025Z")! - BigInt(Date.parse("2026-01-05T14:00:00Z")) * 1000n).toBe(2n);
    expect(asEpochMicros("2026-01-05T14:00:00.0000035Z")! - BigInt(Date.parse("2026-01-05T14:00:00Z")) * 1000n).toBe(4n);
    for (const bad of ["2026-02-30T10:00:00Z", "2026-01-05T24:00:00Z", "2026-01-05T10:00:00", "yesterday", "", 1767621600000, null]) {
      expect(asEpochMicros(bad), String(bad)).toBeNull();
      expect(asInstant(bad), String(bad)).toBeNull();
    }
    expect(asInstant("2026-01-05T09:00:00.5-05:00")).toBe("2026-01-05T09:00:00.5-05:00");
  });

  it("a value that does not fit its type is null, never a wrong value", () => {
    expect(asCents("0.29")).toBe(29n);
    expect(asCents("-1234.5")).toBe(-123450n);
    expect(asCents("0012.30")).toBe(1230n);
    expect(asCents("9999999999999999.99")).toBe(999999999999999999n);
    for (const bad of ["12.345", "1,234.50", "", "1e3", "--1", "10000000000000000.00", 12.5, null]) expect(asCents(bad), String(bad)).toBeNull();
    // The text a DECIMAL column takes is exactly what has an amount in cents.
    for (const v of ["0.29", "-1234.5", "0012.30", "9999999999999999.99", "00000000000000000001.00", "12.345", "1,234.50", "", "1e3", "--1", "10000000000000000.00", 12.5, null]) {
      expect(asDecimal(v), String(v)).toBe(asCents(v) === null ? null : v);
    }
    expect(asEpochDay("1970-01-02")).toBe(1);
    expect(asDate("2024-02-29")).toBe("2024-02-29");
    // Twice each: the second answer comes from what the first read.
    for (const bad of ["2026-02-29", "2026-13-01", "2026-1-01", "0000-01-01", 20260101, "2026-02-29"]) expect(asDate(bad), String(bad)).toBeNull();
    expect(asEpochDay("1970-01-02")).toBe(1);
  });

  it("COPY text escapes backslash, tab, newline and CR, and keeps NUL out", () => {
    expect(copyField(null)).toBe("\\N");
    expect(copyField("a\\b\tc\nd\re")).toBe("a\\\\b\\tc\\nd\\re");
    expect(copyField("\\N")).toBe("\\\\N");
    expect(copyField("x\u0000y")).toBe("x\uFFFDy");
    expect(copyJson({ a: "x\u0000", b: "\\u0000 literal" })).toBe(copyField(JSON.stringify({ a: "x\uFFFD", b: "\\u0000 literal" })));
    expect(copyJson(null)).toBe("\\N");
  });
});
