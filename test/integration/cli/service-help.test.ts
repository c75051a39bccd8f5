/** --help says which service a command talks to, and that none is assumed. */
import { describe, expect, it } from "vitest";
import { ExitCode } from "../../../src/cli/exit-codes.js";
import { runCli } from "../../unit/cli/run-cli.js";

describe("--help on choosing the service", () => {
  it("names the three ways to choose one, and says none is assumed", async () => {
    const r = await runCli(["--help"]);
    expect(r.code).toBe(ExitCode.OK);
    const flat = r.stdout.replace(/\s+/g, " ");
    expect(flat).toContain("--env <name> named environment (env BENEFITS_ENV); sandbox means the embedded sandbox");
    expect(flat).toContain("Service: none is assumed.");
    expect(flat).toContain("BENEFITS_BASE_URL and BENEFITS_API_KEY");
    expect(flat).toContain("--env sandbox");
    expect(flat).toContain("A snapshot syncs from the service it was first synced from");
  });

  it("a command's --help shows the same (the global flags are shown there too)", async () => {
    const r = await runCli(["sync", "--help"]);
    expect(r.stdout.replace(/\s+/g, " ")).toContain("sandbox means the embedded sandbox");
  });
});
