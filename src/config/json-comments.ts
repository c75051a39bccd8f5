/**
 * Comments in the config file: `benefits-sync init` writes one that explains each setting where
 * it stands, as tsconfig.json and editors' settings do. They are turned into spaces (new lines
 * kept) before JSON.parse, so a syntax error after a comment keeps its own line and column.
 */

/**
 * `text` with every `// ...` and `/* ... *\/` outside a string replaced by spaces. An unterminated
 * block comment is left as it is, for JSON.parse to refuse where it starts.
 *
 * @example blankComments('{"u": "http://x"} // y') // '{"u": "http://x"}     '
 */
export function blankComments(text: string): string {
  let out = "";
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') {
      const end = stringEnd(text, i);
      out += text.slice(i, end);
      i = end;
    } else if (c === "/" && text[i + 1] === "/") {
      const nl = text.indexOf("\n", i);
      const end = nl < 0 ? text.length : nl;
      out += " ".repeat(end - i);
      i = end;
    } else if (c === "/" && text[i + 1] === "*") {
      const close = text.indexOf("*/", i + 2);
      if (close < 0) return out + text.slice(i);
      out += text.slice(i, close + 2).replace(/[^\n]/g, " ");
      i = close + 2;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** The index just past the string that opens at `start` (or the end of the text). */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length) {
    if (text[i] === "\\") i += 2;
    else if (text[i] === '"' || text[i] === "\n") return i + 1;
    else i++;
  }
  return text.length;
}
