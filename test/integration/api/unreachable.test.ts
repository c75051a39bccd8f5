/**
 * A service that cannot be reached is named by host and port in the error, so a mistyped host or
 * port shows at once: a refused connection, a name that does not resolve, a server that never
 * answers. The key never appears.
 */
import { describe, expect, it } from "vitest";
import { createClient } from "../../../src/api/client.js";
import { TransportError } from "../../../src/errors.js";
import { closedPort } from "../../helpers/ports.js";
import { apiTestFixture } from "./harness.js";

const KEY = "unreachable-key-7c1e90";
const { probe, start } = apiTestFixture(KEY);


async function failure(baseUrl: string, deadlines = {}): Promise<TransportError> {
  const c = createClient({ baseUrl, apiKey: KEY, logger: probe.logger, deadlines, retry: { maxAttempts: 1 } });
  try {
    const err = await probe.reject(c.getJson("/v2/designs"));
    expect(err).toBeInstanceOf(TransportError);
    expect((err as Error).message).not.toContain(KEY);
    return err as TransportError;
  } finally {
    await c.close();
  }
}

describe("a service that cannot be reached is named by host and port", () => {
  it("connection refused", async () => {
    const port = await closedPort();
    const err = await failure(`http://127.0.0.1:${port}/api`);
    expect(err.causeCode).toBe("ECONNREFUSED");
    expect(err.message).toBe(`GET /v2/designs to 127.0.0.1:${port} failed: connection refused (ECONNREFUSED)`);
  });

  it("a host name that does not resolve, on the scheme's default port", async () => {
    const err = await failure("https://no-such-host.invalid/api");
    expect(err.message).toContain("GET /v2/designs to no-such-host.invalid:443 failed: host ");
  });

  it("a server that never answers", async () => {
    const server = await start(() => {});
    const port = new URL(server.url).port;
    const err = await failure(server.url, { headersMs: 300 });
    expect(err.causeCode).toBe("UND_ERR_HEADERS_TIMEOUT");
    expect(err.message).toBe(`GET /v2/designs to 127.0.0.1:${port} failed: no answer before the headers deadline (UND_ERR_HEADERS_TIMEOUT)`);
  });
});
