/** Two strings in code-unit order, the order of every report's rows (not the locale's: files compare byte for byte across machines). */
export const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
