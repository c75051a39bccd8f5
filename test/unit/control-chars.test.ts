/**
 * The one rule for untrusted text: C0 (but newline and tab in redact), DEL, C1 as \xHH, the bidi
 * controls as \uHHHH; redact() applies it to every message; the job log's JSON lines stay JSON.
 */
import { describe, expect, it } from "vitest";
import { escapeControls } from "../../src/control-chars.js";
import { redact } from "../../src/errors.js";
import { jsonLines } from "../../src/jobs/telemetry.js";
import { shownOutput } from "../../src/cli/shown-output.js";

const PLANT = "A\u001b[2J\u202e\u2066\u0085\u007f\r\u0007B";

describe("control characters", () => {
  it("redact escapes C0, DEL, C1 and bidi controls, keeps newline and tab, and is idempotent", () => {
    const out = redact(`${PLANT}\n\tnext`);
    expect(out).toBe("A\\x1b[2J\\u202e\\u2066\\x85\\x7f\\x0d\\x07B\n\tnext");
    expect(redact(out)).toBe(out);
    expect(escapeControls("a\tb\n", { lines: false })).toBe("a\\x09b\\x0a");
  });

  it("a job log line holding a C1 or bidi control stays JSON", () => {
    let line = "";
    jsonLines({ write: (s: string) => (line += s) })({ event: "job.failed", message: PLANT });
    expect(line).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    expect((JSON.parse(line) as { message: string }).message).toBe("A\\x1b[2J\\u202e\\u2066\\x85\\x7f\\x0d\\x07B");
  });

  it("the CLI's door: text escaped, JSON escaped as JSON reads it back, our progress redraw kept", () => {
    let text = "";
    shownOutput({ write: (s: string) => (text += s) }, false).write(`name ${PLANT}\n`);
    expect(text).toBe("name A\\x1b[2J\\u202e\\u2066\\x85\\x7f\\x0d\\x07B\n");
    let json = "";
    shownOutput({ write: (s: string) => (json += s) }, true).write(`${JSON.stringify({ name: PLANT })}\n`);
    expect(json).not.toMatch(/[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    expect((JSON.parse(json) as { name: string }).name).toBe(PLANT);
    let tty = "";
    shownOutput({ write: (s: string) => (tty += s) }, false).write("\r\x1b[2Ksync: 3 pages");
    expect(tty).toBe("\r\x1b[2Ksync: 3 pages");
  });
});
