/**
 * The scale section of `npm run bench` (BENCH_SCALE_MEMBERS=1000000): the first sync's records per
 * second at BENCH_MEMBERS and at BENCH_SCALE_MEMBERS members in one run, their ratio (the cost of
 * one record may grow by at most 1.2 times at ten times the data), and the peak memory of the
 * large first sync and of a no-change re-sync of it (each under 300 MB). On the large snapshot, every
 * question of the analyst's guide on the views against typed copies (analyst.ts, guideSection).
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { guideSection, type Report, type Worker } from "./analyst.js";

export interface ScaleOptions {
  readonly small: number;
  readonly large: number;
  readonly groupsPer100k: number;
  readonly claimsPerMember: number;
  readonly window: { from: string; to: string };
}

type Start = (args: string[]) => Promise<{ baseUrl: string; key: string; stop: () => Promise<void> }>;

export async function scaleSection(dir: string, o: ScaleOptions, startSandbox: Start, worker: Worker, report: Report): Promise<void> {
  const measure = async (members: number, resync: boolean) => {
    const groups = Math.max(1, Math.round((o.groupsPer100k * members) / 100_000));
    const sb = await startSandbox(["--members", String(members), "--groups", String(groups), "--claims-per-member", String(o.claimsPerMember)]);
    const db = join(dir, `scale-${members}.db`);
    try {
      const first = worker(["sync", sb.baseUrl, sb.key, o.window.from, o.window.to, db]);
      if (first.status !== "succeeded") throw new Error(`the first sync of ${members} members failed: ${first.error}`);
      const again = resync ? worker(["sync", sb.baseUrl, sb.key, o.window.from, o.window.to, db]) : undefined;
      if (again && again.status !== "succeeded") throw new Error(`the re-sync of ${members} members failed: ${again.error}`);
      if (resync) guideSection(db, join(dir, `scale-${members}-copy.db`), members, report);
      const rate = Number(first.inserted) / (Number(first.ms) / 1000);
      console.log(
        `  scale: ${members} members: first sync ${(Number(first.ms) / 1000).toFixed(1)} s, ${first.inserted} records, ` +
          `${Math.round(rate)} records/s, ${first.maxRssMb} MB peak, ${first.dbBytes} bytes (${Math.round(Number(first.dbBytes) / Number(first.inserted))} per record)` +
          (again ? `; no-change re-sync ${(Number(again.ms) / 1000).toFixed(1)} s, ${again.maxRssMb} MB peak` : ""),
      );
      return { rate, first, again };
    } finally {
      await sb.stop();
      for (const f of [db, `${db}-wal`, `${db}-shm`]) rmSync(f, { force: true });
    }
  };
  const small = await measure(o.small, false);
  const large = await measure(o.large, true);
  const ratio = small.rate / large.rate;
  report(
    `per-record cost of a first sync at ${o.large} members / at ${o.small}`,
    `${ratio.toFixed(3)} (${Math.round(large.rate)} vs ${Math.round(small.rate)} records/s)`,
    "<= 1.2",
    ratio <= 1.2,
  );
  const peaks = [Number(large.first.maxRssMb), Number(large.again!.maxRssMb)];
  report(`peak memory at ${o.large} members (first sync, no-change re-sync)`, `${peaks[0]} MB, ${peaks[1]} MB`, "< 300 MB each", Math.max(...peaks) < 300);
}
