/**
 * Two census appliers in the simulation (census.ts): schedules CENSUS_SIM_SEED..+CENSUS_SIM_RUNS-1,
 * each a first apply maybe killed, two appliers at once, lost answers, then one apply alone.
 *
 *   npx vitest run test/sim/census.test.ts                                   the suite's share: 6 schedules
 *   CENSUS_SIM_SEED=900 CENSUS_SIM_RUNS=1 npx vitest run test/sim/census.test.ts   replay one, with its trace
 *   CENSUS_SIM_RUNS=200 npx vitest run test/sim/census.test.ts               a long run
 */
import { describe, expect, it } from "vitest";
import { runCensusSchedule } from "./census.js";

const RUNS = Number(process.env.CENSUS_SIM_RUNS ?? 6);
const BASE = process.env.CENSUS_SIM_SEED === "random" ? Math.floor(Math.random() * 1e6) : Number(process.env.CENSUS_SIM_SEED ?? 500);

describe("simulation: two census appliers on one group, after a killed apply, with lost answers", () => {
  // Its own timeout, from the count: 6 schedules take 30 s on a loaded machine; a long run has more.
  it(`${RUNS} schedule(s) from seed ${BASE}: every hire once, no write sent twice, no lock left, no SSN written`, { timeout: Math.max(120_000, RUNS * 20_000) }, async () => {
    const failures: string[] = [];
    for (let i = 0; i < RUNS; i++) {
      const seed = BASE + i;
      const out = await runCensusSchedule(seed);
      if (RUNS === 1) process.stdout.write(`${out.trace.join("\n")}\n`);
      if (out.violations.length) {
        failures.push(`seed ${seed} (replay: CENSUS_SIM_SEED=${seed} CENSUS_SIM_RUNS=1 npx vitest run test/sim/census.test.ts)\n  ${out.violations.map((v) => `${v.kind}: ${v.message}`).join("\n  ")}\n${out.trace.join("\n")}`);
      }
      if ((i + 1) % 25 === 0) process.stdout.write(`census sim: ${i + 1}/${RUNS} schedules, ${failures.length} failing\n`);
    }
    expect(failures, failures.join("\n\n")).toEqual([]);
  });
});
