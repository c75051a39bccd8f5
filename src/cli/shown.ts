/**
 * Untrusted text (a signed webhook's event id, a member id, a recorded reason) made safe to print on
 * a terminal: every control character (C0 U+0000–U+001F, DEL U+007F, C1 U+0080–U+009F) is shown
 * escaped as `\xHH`, newline and tab included, since each such text is one field on one line. An id
 * holding `\x1b[2J` prints as those six characters instead of clearing the screen.
 *
 * @example
 * shown("evt\x1b[2J\x07") // 'evt\\x1b[2J\\x07'
 */
export function shown(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
}
