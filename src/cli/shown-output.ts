import { escapeControls } from "../control-chars.js";
import type { Output } from "./context.js";

/** The redraw a progress line begins with (return, erase the line): ours, kept as it is. */
const REDRAW = "\r\x1b[2K";

/**
 * The door every command's output goes through: whatever a command prints (a member's or a group's
 * name, a stored run error, a service's message, a config value) reaches the terminal with its
 * control characters escaped by the one rule (`control-chars.ts`, newline and tab kept), so no text
 * from elsewhere can clear the screen, move the cursor or reorder a line. The redraw our own
 * progress lines begin with stays. With `--json` each is written `\uHHHH`, which JSON reads back as
 * the character itself: the output stays the same JSON (JSON.stringify escaped C0 already; C1, DEL
 * and the bidi controls are escaped here).
 *
 * @example shownOutput(process.stdout, false).write("Ann\x1b[2J\n") // prints Ann\x1b[2J
 */
export function shownOutput(out: Output & { readonly isTTY?: boolean }, json: boolean): Output & { readonly isTTY?: boolean } {
  return {
    get isTTY() {
      return out.isTTY;
    },
    write(chunk: string) {
      const redraw = chunk.startsWith(REDRAW) ? REDRAW : "";
      return out.write(redraw + escapeControls(chunk.slice(redraw.length), { json }));
    },
  };
}
