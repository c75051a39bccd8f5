/**
 * The JSON text of each item of a list answer (`{"data": [...]}`, a bare array, `{"items": [...]}`
 * or `{"results": [...]}`), in order, without parsing it: a scan that only tracks strings and
 * nesting, jumping from quote to quote with indexOf. Returns undefined for any other shape, so the
 * caller falls back to what JSON.parse gave.
 *
 * @example rawListItems('{"data":[{"id":"a"}, {"id":"b"}],"hasMore":false}') // ['{"id":"a"}', '{"id":"b"}']
 */
export function rawListItems(text: string): string[] | undefined {
  let i = skipWs(text, 0);
  if (text.charCodeAt(i) === 0x5b /* [ */) return splitArray(text, i);
  if (text.charCodeAt(i) !== 0x7b /* { */) return undefined;
  i = skipWs(text, i + 1);
  while (i < text.length && text.charCodeAt(i) === 0x22 /* " */) {
    const keyEnd = endOfString(text, i);
    if (keyEnd < 0) return undefined;
    const key = text.slice(i + 1, keyEnd);
    i = skipWs(text, keyEnd + 1);
    if (text.charCodeAt(i) !== 0x3a /* : */) return undefined;
    i = skipWs(text, i + 1);
    if ((key === "data" || key === "items" || key === "results") && text.charCodeAt(i) === 0x5b) return splitArray(text, i);
    const end = endOfValue(text, i);
    if (end < 0) return undefined;
    i = skipWs(text, end);
    if (text.charCodeAt(i) === 0x2c /* , */) i = skipWs(text, i + 1);
  }
  return undefined;
}

function skipWs(t: string, i: number): number {
  let c = t.charCodeAt(i);
  while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = t.charCodeAt(++i);
  return i;
}

/** Index of the quote that closes the string opening at `i`, or -1. */
function endOfString(t: string, i: number): number {
  let j = i;
  for (;;) {
    j = t.indexOf('"', j + 1);
    if (j < 0) return -1;
    let backslashes = 0;
    for (let k = j - 1; t.charCodeAt(k) === 0x5c; k--) backslashes++;
    if (backslashes % 2 === 0) return j;
  }
}

/** Index just past the value starting at `i`, or -1. */
function endOfValue(t: string, i: number): number {
  const c = t.charCodeAt(i);
  if (c === 0x22) {
    const e = endOfString(t, i);
    return e < 0 ? -1 : e + 1;
  }
  if (c !== 0x7b && c !== 0x5b) {
    let j = i;
    while (j < t.length) {
      const d = t.charCodeAt(j);
      if (d === 0x2c || d === 0x7d || d === 0x5d || d === 0x20 || d === 0x0a || d === 0x0d || d === 0x09) break;
      j++;
    }
    return j;
  }
  let depth = 0;
  for (let j = i; j < t.length; j++) {
    const d = t.charCodeAt(j);
    if (d === 0x22) {
      j = endOfString(t, j);
      if (j < 0) return -1;
    } else if (d === 0x7b || d === 0x5b) depth++;
    else if (d === 0x7d || d === 0x5d) {
      if (--depth === 0) return j + 1;
    }
  }
  return -1;
}

function splitArray(t: string, open: number): string[] | undefined {
  const out: string[] = [];
  let i = skipWs(t, open + 1);
  if (t.charCodeAt(i) === 0x5d) return out;
  for (;;) {
    const end = endOfValue(t, i);
    if (end < 0) return undefined;
    out.push(t.slice(i, end));
    i = skipWs(t, end);
    const c = t.charCodeAt(i);
    if (c === 0x5d) return out;
    if (c !== 0x2c) return undefined;
    i = skipWs(t, i + 1);
  }
}
