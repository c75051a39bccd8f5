/** Option value parsers: a bad value is a usage error at parse time, not a surprise mid-run. */
import { InvalidArgumentError } from "commander";
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
    const d = new Date(`${v}T00:00:00Z`);
    if (!/^\d{4}-\d{2}-\d{2}$/.test(v) || Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== v) {
      throw new InvalidArgumentError("expected a date YYYY-MM-DD.");
    }
    return v;
  },
  format: (v) => {
    if (!["csv", "jsonl", "parquet"].includes(v)) throw new InvalidArgumentError("expected csv, jsonl or parquet.");
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
