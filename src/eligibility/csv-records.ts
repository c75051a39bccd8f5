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
  const src = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const records: CsvRecord[] = [];
  let fields: string[] = [];
  let field = "";
  let line = 1;
  let start = 1;
  let quoted = false;
  let quoteLine = 0;
  const endRecord = () => {
    fields.push(field);
    if (!(fields.length === 1 && fields[0] === "")) records.push({ line: start, fields });
    fields = [];
    field = "";
  };
  for (let i = 0; i < src.length; i++) {
    const c = src[i]!;
    if (quoted) {
      if (c === '"') {
        if (src[i + 1] === '"') (field += '"'), i++;
        else quoted = false;
      } else {
        if (c === "\n") line++;
        field += c;
      }
      continue;
    }
    if (c === '"' && field === "") (quoted = true), (quoteLine = line);
    else if (c === ",") fields.push(field), (field = "");
    else if (c === "\n" || c === "\r") {
      if (c === "\r" && src[i + 1] === "\n") i++;
      endRecord();
      line++;
      start = line;
    } else field += c;
  }
  if (quoted) return { records, unterminatedQuoteAt: quoteLine };
  if (field !== "" || fields.length > 0) endRecord();
  return { records };
}
