/**
 * The JSON text of each item of a list answer (`{"data": [...]}`, a bare array, `{"items": [...]}`
 * or `{"results": [...]}`), in order, without parsing it: a scan that only tracks strings and
 * nesting, jumping from quote to quote with indexOf. Returns undefined for any other shape, so the
 * caller falls back to what JSON.parse gave.
 *
 * @example rawListItems('{"data":[{"id":"a"}, {"id":"b"}],"hasMore":false}') // ['{"id":"a"}', '{"id":"b"}']
 */
export function rawListItems(text: string): string[] | undefined {
  return rawList(text)?.items;
}

/**
 * {@link rawListItems} plus the envelope's top-level `hasMore`, when it is a boolean: all the sync
 * needs of a page, without parsing it.
 */
export function rawList(text: string): { items: string[]; hasMore: boolean | undefined } | undefined {
  let i = skipWs(text, 0);
  if (text.charCodeAt(i) === 0x5b /* [ */) {
    const items = splitArray(text, i);
    return items && { items, hasMore: undefined };
  }
  if (text.charCodeAt(i) !== 0x7b /* { */) return undefined;
  let items: string[] | undefined;
  let hasMore: boolean | undefined;
  const ok = eachMember(text, i, (key, start, end) => {
    if (items === undefined && (key === "data" || key === "items" || key === "results") && text.charCodeAt(start) === 0x5b) {
      items = splitArray(text, start);
      if (!items) return false;
    } else if (key === "hasMore") {
      const v = text.slice(start, end);
      hasMore = v === "true" ? true : v === "false" ? false : undefined;
    }
    return true;
  });
  return ok && items ? { items, hasMore } : undefined;
}

/**
 * The string value of a top-level field of an object's JSON text (`undefined` when absent or not
 * a string): the walk reads each item's id this way, without parsing the item.
 *
 * @example topLevelString('{"a":{"id":"x"},"id":"m1"}', "id") // "m1"
 */
export function topLevelString(text: string, field: string): string | undefined {
  const i = skipWs(text, 0);
  if (text.charCodeAt(i) !== 0x7b) return undefined;
  let found: string | undefined;
  eachMember(text, i, (key, start, end) => {
    if (key !== field) return true;
    if (text.charCodeAt(start) === 0x22) found = JSON.parse(text.slice(start, end)) as string;
    return false;
  });
  return found;
}

/**
 * Call `visit(key, valueStart, valueEnd)` for each member of the object opening at `open`; stop
 * when it returns false. Returns false when the text is not a well-formed object.
 */
function eachMember(text: string, open: number, visit: (key: string, start: number, end: number) => boolean): boolean {
  let i = skipWs(text, open + 1);
  if (text.charCodeAt(i) === 0x7d) return true;
  for (;;) {
    if (text.charCodeAt(i) !== 0x22) return false;
    const keyEnd = endOfString(text, i);
    if (keyEnd < 0) return false;
    const rawKey = text.slice(i + 1, keyEnd);
    const key = rawKey.includes("\\") ? (JSON.parse(`"${rawKey}"`) as string) : rawKey;
    i = skipWs(text, keyEnd + 1);
    if (text.charCodeAt(i) !== 0x3a /* : */) return false;
    i = skipWs(text, i + 1);
    const end = endOfValue(text, i);
    if (end < 0) return false;
    if (!visit(key, i, end)) return true;
    i = skipWs(text, end);
    const c = text.charCodeAt(i);
    if (c === 0x7d) return true;
    if (c !== 0x2c) return false;
    i = skipWs(text, i + 1);
  }
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
