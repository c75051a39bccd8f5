import { describe, expect, it } from "vitest";
import { redactingLogger, type Logger } from "../../../src/api/logger.js";
import { redactDeep } from "../../../src/api/redact-deep.js";
import { registerSecret } from "../../../src/errors.js";

const KEY = "redact-unit-key-4411aa";
registerSecret(KEY);

describe("redaction helpers", () => {
  it("redactDeep masks the key in nested strings and keys, and leaves other values alone", () => {
    const out = redactDeep({ path: [KEY, 2], message: `Bearer ${KEY}`, [KEY]: true, n: 1, nil: null });
    expect(JSON.stringify(out)).not.toContain(KEY);
    expect(out.path[1]).toBe(2);
    expect(out.n).toBe(1);
    expect(out.nil).toBeNull();
    expect(out.message).toBe("Bearer [redacted]");
  });

  it("redactingLogger masks messages and string fields before the inner logger sees them", () => {
    const lines: string[] = [];
    const inner: Logger = {
      debug: (m, f) => lines.push(`${m} ${JSON.stringify(f)}`),
      info: (m, f) => lines.push(`${m} ${JSON.stringify(f)}`),
      warn: (m, f) => lines.push(`${m} ${JSON.stringify(f)}`),
    };
    const log = redactingLogger(inner);
    log.debug(`a ${KEY}`, { path: `/v1/members/${KEY}`, n: 3 });
    log.info("b");
    log.warn("c", { ssn: "123-45-6789" });
    expect(lines).toHaveLength(3);
    expect(lines.join("\n")).not.toContain(KEY);
    expect(lines.join("\n")).not.toContain("123-45-6789");
    expect(lines[0]).toContain('"n":3');
  });
});
