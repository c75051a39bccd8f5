/**
 * Every option that takes a day refuses one that does not exist (month 13, month 00, day 32) at
 * parse time, as a usage error (exit 2) naming the option: never "Invalid time value", never the
 * exit 1 that means a run or the arithmetic failed. The options are found in the command table, so
 * a new date option is checked the day it is added.
 */
import { describe, expect, it } from "vitest";
import { COMMANDS } from "../../../src/cli/commands.js";
import { ExitCode } from "../../../src/cli/exit-codes.js";
import { runCli } from "./run-cli.js";

const NO_SUCH_DAY = ["2026-13-01", "2026-00-10", "2026-12-32", "2026-02-30"];
const dateOptions = COMMANDS.flatMap((c) => c.options.filter((o) => /<(date|run-or-date)>/.test(o.flags)).map((o) => ({ command: c.name, flag: o.flags.split(" ")[0]! })));

describe("date options", () => {
  it("are found in the command table (sync, reconcile, prune, sandbox)", () => {
    expect(dateOptions.map((o) => `${o.command} ${o.flag}`)).toEqual(
      expect.arrayContaining(["sync --claims-since", "sync --claims-until", "reconcile --from", "reconcile --to", "reconcile --as-of", "prune --before", "sandbox --today"]),
    );
  });

  for (const { command, flag } of dateOptions) {
    it(`${command} ${flag} refuses a day that does not exist: exit 2, the option named`, async () => {
      for (const day of NO_SUCH_DAY) {
        const r = await runCli([...command.split(" "), flag, day]);
        expect(r.code, `${command} ${flag} ${day}`).toBe(ExitCode.USAGE);
        expect(r.stderr, `${command} ${flag} ${day}`).toContain(`option '${flag} `);
        expect(r.stderr, `${command} ${flag} ${day}`).toMatch(/expected (a run id \(e\.g\. 7\) or )?a date YYYY-MM-DD/);
        expect(r.stderr).not.toContain("Invalid time value");
      }
    });
  }

  it("reconcile --from and --to still take a run id or a real day past the parser", async () => {
    // Past the parser, the command asks for --out: the values themselves were accepted.
    const r = await runCli(["reconcile", "--from", "7", "--to", "2028-02-29"]);
    expect(r.code).toBe(ExitCode.USAGE);
    expect(r.stderr).toContain("--out: the directory to write the report into is required");
  });
});
