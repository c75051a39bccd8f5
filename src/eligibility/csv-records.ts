/**
 * RFC 4180 records of a census file, each with the line it starts on: a row error must name the
 * line the user sees in their editor, also when a quoted field holds a line break.
 */

export interface CsvRecord {
  /** 1-based line of the file where the record starts. */
  readonly line: number;
  readonly fields: readonly string[];
}

/**
 * Split CSV text into records (quotes, doubled quotes, CRLF or LF, a byte-order mark). Blank lines
 * are skipped. An unterminated quote is reported with the line it opened on.
 *
 * @example csvRecords('a,b\n"x, y",2\n') // [{line: 1, fields: ["a","b"]}, {line: 2, fields: ["x, y","2"]}]
 */
export function csvRecords(text: string): { records: CsvRecord[]; unterminatedQuoteAt?: number } {
  const records: CsvRecord[] = [];
  const parser = new CsvParser((r) => records.push(r));
  parser.push(text);
  return { records, ...parser.end() };
}

/**
 * The same split, fed text in pieces of any size (a quote or a CRLF may straddle two), each record
 * handed on as soon as it ends: a file is read in chunks, never held whole.
 *
 * @example const p = new CsvParser((r) => rows.push(r)); p.push('a,"b'); p.push('"\n'); p.end();
 */
export class CsvParser {
  private fields: string[] = [];
  private field = "";
  private line = 1;
  private start = 1;
  private quoted = false;
  private quoteLine = 0;
  /** A quote inside a quoted field, whose meaning the next character decides (`""` or the end). */
  private quoteEnd = false;
  private afterCr = false;
  private first = true;

  constructor(private readonly onRecord: (record: CsvRecord) => void) {}

  push(chunk: string): void {
    let i = 0;
    if (this.first && chunk.length > 0) {
      this.first = false;
      if (chunk.charCodeAt(0) === 0xfeff) i = 1;
    }
    // A cell's text is taken by slices of the chunk, not a character at a time: a string built by
    // `+=` per character is a rope of one node per character, tens of bytes each.
    let seg = i;
    const take = (to: number) => {
      if (to > seg) this.field += chunk.slice(seg, to);
    };
    for (; i < chunk.length; i++) {
      const c = chunk[i]!;
      if (this.afterCr) {
        this.afterCr = false;
        if (c === "\n") {
          seg = i + 1;
          continue;
        }
      }
      if (this.quoteEnd) {
        this.quoteEnd = false;
        if (c === '"') continue; // a doubled quote: this one is the cell's, taken with what follows
        this.quoted = false;
      }
      if (this.quoted) {
        if (c === '"') take(i), (seg = i + 1), (this.quoteEnd = true);
        else if (c === "\n") this.line++;
      } else if (c === '"' && this.field === "" && seg === i) (this.quoted = true), (this.quoteLine = this.line), (seg = i + 1);
      else if (c === ",") take(i), this.fields.push(this.field), (this.field = ""), (seg = i + 1);
      else if (c === "\n" || c === "\r") {
        take(i);
        seg = i + 1;
        this.afterCr = c === "\r";
        this.endRecord();
        this.line++;
        this.start = this.line;
      }
    }
    take(chunk.length);
  }

  /** The last record; `unterminatedQuoteAt` when a quoted cell never closed. */
  end(): { unterminatedQuoteAt?: number } {
    if (this.quoteEnd) (this.quoteEnd = false), (this.quoted = false);
    if (this.quoted) return { unterminatedQuoteAt: this.quoteLine };
    if (this.field !== "" || this.fields.length > 0) this.endRecord();
    return {};
  }

  private endRecord(): void {
    this.fields.push(this.field);
    if (!(this.fields.length === 1 && this.fields[0] === "")) this.onRecord({ line: this.start, fields: this.fields });
    this.fields = [];
    this.field = "";
  }
}
