/**
 * The AWS SDK prints a notice on Node 20 (its releases after January 2027 need Node 22) on the
 * first client of a process, unless AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED is "true".
 * The CLI sets it (src/sinks/s3/s3-client.ts; s3-out.test.ts sees `--quiet` print nothing); the
 * test S3 server's own client must too, or each test file that starts one prints the notice into
 * `npm test`'s output. The variable is read when the client is made, so it is checked here as set
 * by the helper itself (it is deleted first), and no notice is emitted.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startS3Server } from "../helpers/s3-server.js";

const VAR = "AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED";
const seen: string[] = [];
const onWarning = (w: Error) => seen.push(`${w.name}: ${w.message}`);
afterEach(() => {
  process.off("warning", onWarning);
});

describe("the test S3 server's client", () => {
  it("turns the SDK's Node-version notice off the SDK's way, and none is printed", async () => {
    delete process.env[VAR];
    process.on("warning", onWarning);
    const s3 = await startS3Server(["lake"]);
    try {
      expect(process.env[VAR]).toBe("true");
      expect(await s3.keys("lake")).toEqual([]);
      await new Promise((r) => setTimeout(r, 10)); // process.emitWarning reports on a later tick
      expect(seen.filter((w) => /NodeVersionSupportWarning/.test(w))).toEqual([]);
    } finally {
      await s3.close();
    }
  });
});
