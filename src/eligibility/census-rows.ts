/**
 * The checked rows of a census, kept compactly: each row one flat string (its SSN token and its
 * checked cells, joined), made into a {@link CensusRow} object only while it is looked at. A row
 * object of twenty properties and its cells (each a slice that can keep its 1 MB read chunk alive)
 * took about 1.4 KB; the flat string takes about its length, so the rows of a file at the size limit
 * fit in memory (docs/census.md gives the measured peak).
 */
import { CENSUS_COLUMNS, type CensusRowFields } from "./census-row.js";

/** One person of the file, checked. */
export interface CensusRow extends Omit<CensusRowFields, "ssn"> {
  readonly line: number;
  /** Digits only; sent in enrollment bodies, never written to a file, a log or the plan. */
  readonly ssn: string;
  readonly ssnToken: string;
  readonly ssnLast4: string;
}

/** Between the parts of a packed row: a control character a checked cell never holds. */
const SEP = "\u001f";
const NAMES = CENSUS_COLUMNS.map((c) => c.name);

/** Pack a checked row (its cells as the schema gave them, an empty optional as undefined). */
export function packRow(fields: CensusRowFields, ssnToken: string): string {
  const f = fields as unknown as Record<string, string | undefined>;
  // join() makes one new flat string: no part of it is a slice of the text it was read from.
  return [ssnToken, ...NAMES.map((n) => (f[n] ?? "").replaceAll(SEP, " "))].join(SEP);
}

/** The SSN token of a packed row, without unpacking the rest. */
export const packedToken = (packed: string): string => packed.slice(0, packed.indexOf(SEP));

/** The row object of a packed row. */
export function unpackRow(packed: string, line: number): CensusRow {
  const [ssnToken, ...cells] = packed.split(SEP);
  const row: Record<string, unknown> = { line };
  NAMES.forEach((n, i) => {
    const v = cells[i]!;
    if (v !== "") row[n] = v;
  });
  const ssn = row.ssn as string;
  return { ...row, ssnToken, ssnLast4: ssn.slice(-4) } as unknown as CensusRow;
}

/**
 * The rows, in file order; each read gives a fresh object (hold one only while it is used).
 *
 * @example for (const row of census.rows) plan(row); census.rows.byLine(7)?.first_name
 */
export class CensusRows implements Iterable<CensusRow> {
  constructor(
    private readonly packed: readonly string[],
    private readonly lines: readonly number[],
  ) {}

  get length(): number {
    return this.packed.length;
  }

  *[Symbol.iterator](): Iterator<CensusRow> {
    for (let i = 0; i < this.packed.length; i++) yield unpackRow(this.packed[i]!, this.lines[i]!);
  }

  /** The row at file line `line`, or undefined (the lines ascend: a binary search). */
  byLine(line: number): CensusRow | undefined {
    let lo = 0;
    let hi = this.lines.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const at = this.lines[mid]!;
      if (at === line) return unpackRow(this.packed[mid]!, at);
      if (at < line) lo = mid + 1;
      else hi = mid - 1;
    }
    return undefined;
  }

  /** Every row as an object at once: for tests and small files only. */
  toArray(): CensusRow[] {
    return [...this];
  }
}
