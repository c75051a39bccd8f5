/** Option value parsers: a bad value is a usage error at parse time, not a surprise mid-run. */
import { InvalidArgumentError } from "commander";
import { isCalendarDay } from "../calendar-day.js";
import type { OptionSpec } from "./commands.js";

const parsers: Record<NonNullable<OptionSpec["parse"]>, (value: string) => unknown> = {
  positiveInt: (v) => {
    if (!/^\d+$/.test(v) || Number(v) < 1) throw new InvalidArgumentError("expected a positive integer.");
    return Number(v);
  },
  nonNegativeInt: (v) => {
    if (!/^\d+$/.test(v)) throw new InvalidArgumentError("expected an integer >= 0.");
    return Number(v);
  },
  date: (v) => {
    if (!isCalendarDay(v)) throw new InvalidArgumentError("expected a date YYYY-MM-DD.");
    return v;
  },
  // A run id, or a day: one that looks like a date but names no day (2026-13-01) is refused here,
  // with the other dates, and never reaches the date arithmetic.
  runOrDate: (v) => {
    if (!/^\d+$/.test(v.trim()) && !isCalendarDay(v.trim())) throw new InvalidArgumentError("expected a run id (e.g. 7) or a date YYYY-MM-DD.");
    return v;
  },
  format: (v) => {
    if (!["csv", "jsonl", "parquet"].includes(v)) throw new InvalidArgumentError("expected csv, jsonl or parquet.");
    return v;
  },
  layout: (v) => {
    if (!["folder", "tables"].includes(v)) throw new InvalidArgumentError("expected folder or tables.");
    return v;
  },
  list: (v) => {
    const items = v.split(",").map((s) => s.trim()).filter(Boolean);
    if (items.length === 0) throw new InvalidArgumentError("expected a comma-separated list.");
    return items;
  },
};

/** The commander argument parser for an option spec, if it declares one. */
export function parserFor(spec: OptionSpec): ((value: string) => unknown) | undefined {
  return spec.parse ? parsers[spec.parse] : undefined;
}
