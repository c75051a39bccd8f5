/**
 * The one rule for showing untrusted text (a name or an error message from the service, a signed
 * event id, a stored run error, a config value): its control characters are shown escaped, never
 * sent to the reader's terminal or file as they are. A name holding `ESC[2J` prints as `\x1b[2J`
 * instead of clearing the screen, and a right-to-left override (U+202E) as `\u202e` instead of
 * turning the rest of the line around.
 *
 * Escaped: C0 (U+0000–U+001F, CR included), DEL (U+007F) and C1 (U+0080–U+009F) as `\xHH`; the
 * bidi embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069) as `\uHHHH`. `redact()`
 * calls this keeping newline and tab (a message may have several lines); `shown()` escapes those
 * too (one field on one line). Escaping is idempotent: what it writes holds no control character.
 */

// eslint-disable-next-line no-control-regex
const ALL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
// eslint-disable-next-line no-control-regex
const BUT_LINES = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

const hex = (c: string, width: number): string => c.charCodeAt(0).toString(16).padStart(width, "0");
const escape = (c: string): string => (c.charCodeAt(0) > 0xff ? `\\u${hex(c, 4)}` : `\\x${hex(c, 2)}`);
/** Inside a JSON string `\uHHHH` is an escape JSON reads back as the same character: the text stays JSON. */
const jsonEscape = (c: string): string => `\\u${hex(c, 4)}`;

/**
 * `text` with its control characters escaped; newline and tab kept unless `lines` is false. With
 * `json`, every one is written `\uHHHH`, which a JSON text may hold only inside a string, where it
 * reads back as the character itself: for JSON text, whose C0 characters are escaped already.
 *
 * @example
 * escapeControls("Ann\x1b[2J\u202e\n") // 'Ann\\x1b[2J\\u202e\n'
 * escapeControls("a\tb\n", { lines: false }) // 'a\\x09b\\x0a'
 * escapeControls('{"n":"A\u202e\x85"}\n', { json: true }) // '{"n":"A\\u202e\\u0085"}\n'
 */
export function escapeControls(text: string, options: { readonly lines?: boolean; readonly json?: boolean } = {}): string {
  return text.replace(options.lines === false ? ALL : BUT_LINES, options.json ? jsonEscape : escape);
}
