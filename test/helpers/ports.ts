/** Ports for tests that need a service nobody answers on. */
import { createServer, type AddressInfo } from "node:net";

/** A loopback port with nothing listening on it: taken from the system, then let go. */
export async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}
