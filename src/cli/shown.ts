import { escapeControls } from "../control-chars.js";

/**
 * Untrusted text (a signed webhook's event id, a member id, a recorded reason, a service's name)
 * made safe to print on a terminal by the one rule of `control-chars.ts`: every control character
 * (C0, DEL, C1, bidi controls) is shown escaped, newline and tab included, since each such text is
 * one field on one line. An id holding `\x1b[2J` prints as those six characters instead of
 * clearing the screen.
 *
 * @example
 * shown("evt\x1b[2J\x07") // 'evt\\x1b[2J\\x07'
 */
export function shown(text: string): string {
  return escapeControls(text, { lines: false });
}
