import { stringify } from "csv-stringify/sync";

/**
 * One CSV record per RFC 4180, ended by CRLF, written by csv-stringify. A field holding a comma, a
 * double quote, a CR or an LF is quoted, with its quotes doubled: `quoted_match` quotes a lone LF
 * too, which csv-stringify leaves bare when the record delimiter is CRLF (a name with a line break
 * would otherwise shift every later column for every reader). Values are written as they are: a
 * leading `=` is not escaped, since any escape would change the data a loader reads back.
 *
 * @example csvRow(["a", 'say "hi"', "x,y"]) // 'a,"say ""hi""","x,y"\r\n'
 */
export function csvRow(fields: readonly string[]): string {
  return stringify([fields as string[]], OPTIONS);
}

const OPTIONS = { record_delimiter: "\r\n", quoted_match: /[\r\n]/ } as const;
