/**
 * Grouped horizontal bar charts as inline SVG: no script, no font or asset to fetch, readable
 * without colour (each bar carries its value, each series its name in the legend).
 */

export interface Series {
  readonly name: string;
  readonly values: readonly number[];
  readonly color: string;
}

export const escapeXml = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] as string);

const fmt = (n: number): string => n.toLocaleString("en-US");

/** One chart: a row of bars per category, one bar per series, scaled to the largest value. */
export function barChart(id: string, title: string, categories: readonly string[], series: readonly Series[]): string {
  const width = 720;
  const labelW = 170;
  const valueW = 80;
  const barH = 14;
  const gap = 10;
  const top = 34;
  const rowH = series.length * (barH + 2) + gap;
  const legendY = top + categories.length * rowH + 6;
  const height = legendY + 22;
  const max = Math.max(1, ...series.flatMap((s) => s.values.map((v) => Math.abs(v))));
  const span = width - labelW - valueW - 10;
  const parts: string[] = [];
  parts.push(`<text x="0" y="18" class="chart-title">${escapeXml(title)}</text>`);
  categories.forEach((cat, i) => {
    const y0 = top + i * rowH;
    parts.push(`<text x="${labelW - 8}" y="${y0 + (series.length * (barH + 2)) / 2 + 4}" text-anchor="end" class="chart-label">${escapeXml(cat)}</text>`);
    series.forEach((s, j) => {
      const v = s.values[i] ?? 0;
      const w = Math.max(v === 0 ? 0 : 1, Math.round((Math.abs(v) / max) * span));
      const y = y0 + j * (barH + 2);
      parts.push(
        `<rect class="bar" x="${labelW}" y="${y}" width="${w}" height="${barH}" fill="${s.color}"><title>${escapeXml(`${cat}, ${s.name}: ${fmt(v)}`)}</title></rect>`,
        `<text x="${labelW + w + 4}" y="${y + barH - 3}" class="chart-value">${fmt(v)}</text>`,
      );
    });
  });
  series.forEach((s, j) => {
    const x = labelW + j * 180;
    parts.push(`<rect x="${x}" y="${legendY}" width="12" height="12" fill="${s.color}"/>`, `<text x="${x + 16}" y="${legendY + 10}" class="chart-label">${escapeXml(s.name)}</text>`);
  });
  return (
    `<svg id="${escapeXml(id)}" class="chart" xmlns="http://www.w3.org/2000/svg" role="img" aria-label="${escapeXml(title)}" ` +
    `width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">${parts.join("")}</svg>`
  );
}
