/**
 * A census file read and checked: the header against the layout, each row against its schema, then
 * the rules between rows (one subscriber per employee, dependents with a subscriber, one row per
 * SSN). The plain SSN is read only to compute the snapshot's SSN token (the same HMAC under the
 * same key) and to be sent to the service; it is never written by anything downstream.
 */
import { closest } from "../config/problems.js";
import { ssnToken } from "../store/pii/pii.js";
import { describeCell } from "./cell-text.js";
import { CENSUS_COLUMNS, CensusRowSchema } from "./census-row.js";
import { CensusRows, packRow, packedToken, unpackRow, type CensusRow } from "./census-rows.js";
import { CsvParser, type CsvRecord } from "./csv-records.js";

export type { CensusRow } from "./census-rows.js";

/** A row the file gets wrong: the line, the column, what was expected (never the value). */
export interface RowProblem {
  readonly line: number;
  readonly field: string;
  readonly message: string;
}

export interface Census {
  /** Rows under the header, good or not. */
  readonly rowCount: number;
  readonly rows: CensusRows;
  readonly problems: readonly RowProblem[];
}

/** The file as a whole cannot be read as a census: nothing is planned or sent (exit 2). */
export class CensusFileError extends Error {
  readonly code = "CENSUS_FILE";
  constructor(readonly file: string, readonly problems: readonly string[]) {
    super(`${file}: not a census file this version reads:\n${problems.map((p) => `  - ${p}`).join("\n")}\nSee docs/census.md for the layout.`);
    this.name = "CensusFileError";
  }
}

/**
 * Read a census text (`file` names it in messages). Throws {@link CensusFileError} for a header it
 * cannot use; row problems are returned, each with its line and column.
 *
 * @example
 * const { rows, problems } = readCensus(readFileSync("census.csv", "utf8"), "census.csv", piiKey);
 */
export function readCensus(text: string, file: string, piiKey: Buffer): Census {
  const reader = new CensusReader(file, piiKey);
  const parser = new CsvParser((rec) => reader.record(rec));
  parser.push(text);
  return reader.finish(parser.end().unterminatedQuoteAt);
}

/**
 * The same, one record at a time as a file is read (census-input.ts): each row is checked as it
 * comes, and only the checked rows are kept, each packed into one string (census-rows.ts).
 */
export class CensusReader {
  private names: string[] | undefined;
  private rowCount = 0;
  private readonly packed: string[] = [];
  private readonly lines: number[] = [];
  private readonly problems: RowProblem[] = [];

  constructor(
    private readonly file: string,
    private readonly piiKey: Buffer,
  ) {}

  record(rec: CsvRecord): void {
    if (!this.names) return void (this.names = headerNames(rec, this.file));
    const names = this.names;
    this.rowCount++;
    if (rec.fields.length !== names.length) {
      this.problems.push({ line: rec.line, field: "(row)", message: `expected ${names.length} cells as in the header, found ${rec.fields.length}` });
      return;
    }
    const cells: Record<string, string> = Object.fromEntries(CENSUS_COLUMNS.map((c) => [c.name, ""]));
    names.forEach((n, i) => (cells[n] = rec.fields[i]!));
    const parsed = CensusRowSchema.safeParse(cells);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) this.problems.push({ line: rec.line, field: String(issue.path[0] ?? "(row)"), message: issue.message });
      return;
    }
    this.packed.push(packRow(parsed.data, ssnToken(parsed.data.ssn, this.piiKey)));
    this.lines.push(rec.line);
  }

  /** The census, once every record was given (`unterminatedQuoteAt`: the parser's end). */
  finish(unterminatedQuoteAt?: number): Census {
    if (unterminatedQuoteAt !== undefined) throw new CensusFileError(this.file, [`line ${unterminatedQuoteAt}: a quoted cell is never closed`]);
    if (!this.names) throw new CensusFileError(this.file, ["the file is empty: expected a header row, then one row per person"]);
    return { rowCount: this.rowCount, ...crossRowChecks(this.packed, this.lines, this.problems) };
  }
}

/** The header's column names, or {@link CensusFileError} for a header this version cannot use. */
function headerNames(header: CsvRecord, file: string): string[] {
  const names = header.fields.map((f) => f.trim().toLowerCase());
  const known = new Set<string>(CENSUS_COLUMNS.map((c) => c.name));
  const fileProblems: string[] = [];
  // A file without its header starts with a person: say so once, without a word of the row.
  if (!names.some((n) => known.has(n)))
    throw new CensusFileError(file, [`the first row is not a header (none of its ${names.length} cells names a column): a census starts with its header row (${[...known].join(", ")})`]);
  names.forEach((n, i) => {
    const column = { headerColumn: i + 1 };
    // A typo is answered with the column it is nearest to (a column's name, never the header's text).
    const near = known.has(n) ? undefined : closest(n, [...known].filter((k) => !names.includes(k)));
    if (!known.has(n)) fileProblems.push(`${describeCell(column, "", "not a column of the layout", n)}; ${near ? `did you mean ${near}?` : `expected one of ${[...known].join(", ")}`}`);
    else if (names.indexOf(n) !== i) fileProblems.push(describeCell(column, "", `column ${n} appears twice`));
  });
  for (const c of CENSUS_COLUMNS) if (c.required && !names.includes(c.name)) fileProblems.push(`header: the required column ${c.name} is missing`);
  if (fileProblems.length > 0) throw new CensusFileError(file, fileProblems);
  return names;
}

/**
 * The rules between rows; a row that breaks one leaves the usable rows, with its problem. Each row
 * is unpacked only while it is checked; what is kept per row is its line or its token.
 */
function crossRowChecks(packed: string[], lines: number[], problems: RowProblem[]): Omit<Census, "rowCount"> {
  const bySsn = new Map<string, number>();
  const selfLine = new Map<string, number>();
  const spouseOf = new Map<string, number>();
  const drop = new Set<number>();
  const each = (check: (r: CensusRow, i: number) => string | undefined) => {
    for (let i = 0; i < packed.length; i++) {
      if (drop.has(i)) continue;
      const r = unpackRow(packed[i]!, lines[i]!);
      const field = check(r, i);
      if (field !== undefined) drop.add(i);
    }
  };
  const problem = (r: CensusRow, field: string, message: string) => (problems.push({ line: r.line, field, message }), field);
  each((r, i) => {
    const token = packedToken(packed[i]!);
    const seen = bySsn.get(token);
    if (seen !== undefined) return problem(r, "ssn", `the same SSN as line ${seen}: one row per person`);
    bySsn.set(token, r.line);
    if (r.relationship !== "self") return undefined;
    const first = selfLine.get(r.employee_id);
    if (first !== undefined) return problem(r, "relationship", `a second subscriber (self) for the employee_id of line ${first}`);
    selfLine.set(r.employee_id, r.line);
    return undefined;
  });
  bySsn.clear();
  each((r) => {
    if (r.relationship === "self") return undefined;
    if (!selfLine.has(r.employee_id))
      return problem(r, "employee_id", "no subscriber row (relationship self) has this row's employee_id: a dependent's row carries its subscriber's employee_id");
    if (r.relationship !== "spouse") return undefined;
    const spouse = spouseOf.get(r.employee_id);
    if (spouse !== undefined) return problem(r, "relationship", `a second spouse for the employee_id of line ${spouse}`);
    spouseOf.set(r.employee_id, r.line);
    return undefined;
  });
  problems.sort((a, b) => a.line - b.line);
  const keep = (_: unknown, i: number) => !drop.has(i);
  return { rows: new CensusRows(packed.filter(keep), lines.filter(keep)), problems };
}
