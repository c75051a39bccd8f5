/**
 * Money in SQL: the one rule that turns a service amount into exact integer cents, used by every
 * column that has cents (a claim's amounts, a claim line's), so one amount gets one answer.
 */

/**
 * Integer cents of a decimal text amount (`"-1234.5"`, `"0.29"`): exact for every amount with at
 * most two decimals below 10^13 (round() absorbs the binary error of `x * 100`). Anything else (a
 * number sent as JSON, `"1,234.50"`, `"12.345"`, `""`) is NULL, never a wrong number. `x` must hold
 * the service's value with its JSON type (see MoneyType in analyst-schema.ts).
 */
export const cents = (x: string) =>
  `CASE WHEN typeof(${x}) = 'text' AND ${x} NOT GLOB '*[^0-9.-]*' AND ${x} GLOB '*[0-9]*' AND ${x} NOT GLOB '?*-*' ` +
  `AND ${x} NOT GLOB '*.*.*' AND (instr(${x}, '.') = 0 OR length(${x}) - instr(${x}, '.') <= 2) ` +
  `THEN CAST(round(${x} * 100) AS INTEGER) END`;
