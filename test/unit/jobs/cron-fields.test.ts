/**
 * Which cron schedules a job may have: cron's field ranges (minute 0-59, hour 0-23, day 1-31,
 * month 1-12, weekday 0-7), steps from 1 to the field's span, and nothing node-cron 4.6 refuses
 * or reads otherwise than cron (its `*\/61` fires at minute 0 only; it wants a day and a weekday
 * both where cron takes either).
 */
import { validate } from "node-cron";
import { describe, expect, it } from "vitest";
import { cronProblem } from "../../../src/jobs/cron-fields.js";

const accepted = ["0 2 * * *", "15 * * * *", "*/59 * * * *", "0-59/30 0-23 1-31 1-12 *", "0 0 * * 0-7", "0 3 * * 0", "0 3 * * 7", "0 9 * * mon-fri", "0 0 1 jan,jul *", "@daily", "0 */2 * * *", "5,35 1-5/2 * * *"];
const refused: [string, RegExp][] = [
  ["*/61 * * * *", /the minute field "\*\/61" steps by 61; a minute step runs from 1 to 59/],
  ["*/60 * * * *", /steps by 60/],
  ["*/0 * * * *", /steps by 0/],
  ["60 * * * *", /the minute field "60" has "60"; a minute runs from 0 to 59/],
  ["0 24 * * *", /the hour field "24"/],
  ["0 0 0 * *", /the day field "0"/],
  ["0 0 32 * *", /the day field "32"/],
  ["0 0 * 13 *", /the month field "13"/],
  ["0 0 * * 8", /the weekday field "8"/],
  ["0 22-2 * * *", /runs backwards/],
  ["5/15 * * * *", /step without a range/],
  ["0 0 1 * 1", /sets both the day \(1\) and the weekday \(1\)/],
  ["0 0 L * *", /the day field "L" has "L"/],
  ["0 0 ? * *", /is not cron/],
  ["0 0 * * 1#2", /is not cron/],
  ["0 0 31 2 *", /impossible day of month/],
  ["0 0 * * * *", /expected a cron expression \(minute hour day month weekday\)/],
  ["every hour", /expected a cron expression/],
];

describe("cron schedules", () => {
  it.each(accepted)("accepts %s, which node-cron accepts too", (expr) => {
    expect(cronProblem(expr)).toBeUndefined();
    expect(validate(expr)).toBe(true);
  });

  it.each(refused)("refuses %s, saying why", (expr, why) => {
    expect(cronProblem(expr)).toMatch(why);
  });

  it("the premise: node-cron alone takes */61 and a day with a weekday", () => {
    expect(validate("*/61 * * * *")).toBe(true);
    expect(validate("0 0 1 * 1")).toBe(true);
  });
});
