import { z } from "zod";

/** A calendar date as the service writes it: `YYYY-MM-DD`. */
export const IsoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "expected a date YYYY-MM-DD");

/** An ISO 8601 timestamp; the service's format is not documented, so any ISO-looking string passes. */
export const IsoTimestamp = z.string().min(1);

/**
 * A money amount as a decimal string (`"1234.50"`). Never a float: a float would lose cents
 * and change the record's hash between runs.
 */
export const DecimalString = z.string().regex(/^-?\d+(\.\d+)?$/, "expected a decimal string such as \"1234.50\"");

/** An object identifier: the service's ids are strings (UUIDs for members and coverages). */
export const Id = z.string().min(1);

/** A nullable, optional field: the tolerance rule says a missing optional field is null, not an error. */
export const opt = <T extends z.ZodType>(t: T) => t.nullish();
