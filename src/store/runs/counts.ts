export interface ResourceCounts {
  seen: number;
  inserted: number;
  updated: number;
  deleted: number;
  unchanged: number;
  quarantined: number;
}

export const emptyCounts = (): ResourceCounts => ({ seen: 0, inserted: 0, updated: 0, deleted: 0, unchanged: 0, quarantined: 0 });
