/**
 * The live data: generated records plus an overlay of what writes and simulated days changed.
 * Generated records are addressed by slot (decoded from their id); new records live in append-only
 * arrays (a deletion leaves a tombstone, so a cursor pointing at it still resolves).
 */
import { dayStartMs, isoDay, isoTime } from "./dates.js";
import { decodeId } from "./ids.js";
import { Kind } from "./prng.js";
import { cloneRec, type ClaimRec, type DesignRec, type GroupRec, type MemberRec } from "./records.js";
import { generateClaim } from "./generate-claim.js";
import { generateMember } from "./generate-member.js";
import { SLOTS_PER_HOUSEHOLD, type GroupInfo, type World } from "./world.js";

export type RecordKind = "member" | "claim" | "group";

/** Sees every mutation before it happens (the simulated day's change journal uses it). */
export interface MutationObserver {
  before(kind: RecordKind, id: string, current: unknown): void;
}

/** A location: a generated slot, or a position among new records. */
export type Loc = { gen: number } | { added: number };

class Overlay<T extends { id: string }> {
  readonly overrides = new Map<number, T | null>();
  readonly added: (T | null)[] = [];
  readonly addedPos = new Map<string, number>();
  constructor(
    private readonly gen: (slot: number) => T | undefined,
    private readonly decode: (id: string) => number | undefined,
  ) {}
  locate(id: string): Loc | undefined {
    const pos = this.addedPos.get(id);
    if (pos !== undefined) return { added: pos };
    const slot = this.decode(id);
    return slot === undefined ? undefined : { gen: slot };
  }
  bySlot(slot: number): T | undefined {
    const o = this.overrides.get(slot);
    if (o !== undefined) return o ?? undefined;
    return this.gen(slot);
  }
  byPos(pos: number): T | undefined {
    return this.added[pos] ?? undefined;
  }
  get(id: string): T | undefined {
    const loc = this.locate(id);
    if (!loc) return undefined;
    return "gen" in loc ? this.bySlot(loc.gen) : this.byPos(loc.added);
  }
  /** Replace an existing record (same id). */
  put(rec: T): void {
    const loc = this.locate(rec.id);
    if (!loc) throw new Error(`no record ${rec.id}`);
    if ("gen" in loc) this.overrides.set(loc.gen, rec);
    else this.added[loc.added] = rec;
  }
  insert(rec: T): void {
    this.addedPos.set(rec.id, this.added.length);
    this.added.push(rec);
  }
  delete(id: string): void {
    const loc = this.locate(id);
    if (!loc) return;
    if ("gen" in loc) this.overrides.set(loc.gen, null);
    else this.added[loc.added] = null;
  }
}

export class SandboxState {
  readonly members: Overlay<MemberRec>;
  readonly claims: Overlay<ClaimRec>;
  readonly groups: GroupRec[];
  readonly groupPos = new Map<string, number>();
  private readonly groupNumberPos = new Map<string, number>();
  /** Generated groups by policy id, for the member/claim layout. */
  readonly groupInfo = new Map<string, GroupInfo>();
  readonly designs: readonly DesignRec[];
  /** Coverage id → member id, for coverages of new members (generated ones decode). */
  readonly coverageOwner = new Map<string, string>();
  /** subscriberId → member ids, for households of new members (generated ones are slot ranges). */
  readonly addedBySubscriber = new Map<string, string[]>();
  private subscriberSeq = 0;
  today: number;
  observer: MutationObserver | undefined;
  /** Called after a member is inserted, changed or deleted (webhooks). */
  onMemberChanged: ((id: string) => void) | undefined;
  private lastNewMs = 0;

  constructor(readonly world: World) {
    this.today = world.genesisDay;
    this.members = new Overlay((s) => generateMember(world, s), (id) => decodeId(world.seed, Kind.member, id));
    this.claims = new Overlay((s) => generateClaim(world, s), (id) => decodeId(world.seed, Kind.claim, id));
    this.groups = world.groups.map((g) => cloneRec(g.rec));
    this.groups.forEach((g, i) => {
      this.groupPos.set(g.id, i);
      this.groupNumberPos.set(g.groupId, i);
    });
    for (const g of world.groups) this.groupInfo.set(g.rec.id, g);
    this.designs = world.designs;
  }

  get todayIso(): string {
    return isoDay(this.today);
  }

  /** A createdAt for a new record: on the simulated day, after every older record. */
  nextCreatedAt(): string {
    const ms = Math.max(this.lastNewMs + 1, dayStartMs(this.today) + 8 * 3_600_000);
    this.lastNewMs = ms;
    return isoTime(ms);
  }

  getMember(id: string): MemberRec | undefined {
    return this.members.get(id);
  }
  /** A copy to modify and hand to {@link putMember}. */
  memberForUpdate(id: string): MemberRec | undefined {
    const m = this.members.get(id);
    return m ? cloneRec(m) : undefined;
  }
  putMember(m: MemberRec): void {
    this.observer?.before("member", m.id, this.members.get(m.id));
    this.members.put(m);
    this.indexCoverages(m);
    this.onMemberChanged?.(m.id);
  }
  insertMember(m: MemberRec): void {
    this.observer?.before("member", m.id, undefined);
    this.members.insert(m);
    const hh = this.addedBySubscriber.get(m.subscriberId) ?? [];
    hh.push(m.id);
    this.addedBySubscriber.set(m.subscriberId, hh);
    this.indexCoverages(m);
    this.onMemberChanged?.(m.id);
  }
  deleteMember(id: string): void {
    this.observer?.before("member", id, this.members.get(id));
    this.members.delete(id);
    this.onMemberChanged?.(id);
  }
  private indexCoverages(m: MemberRec): void {
    for (const c of m.coverages) if (decodeId(this.world.seed, Kind.coverage, c.id) === undefined) this.coverageOwner.set(c.id, m.id);
  }
  /** The member owning a coverage id, if it still exists. */
  memberOfCoverage(coverageId: string): MemberRec | undefined {
    const owner = this.coverageOwner.get(coverageId);
    if (owner) return this.getMember(owner);
    const idx = decodeId(this.world.seed, Kind.coverage, coverageId);
    if (idx === undefined) return undefined;
    const m = this.members.bySlot(Math.floor(idx / 2));
    return m && m.coverages.some((c) => c.id === coverageId) ? m : undefined;
  }

  /** The live members of `m`'s household (itself included). */
  householdOf(m: MemberRec): MemberRec[] {
    const slot = decodeId(this.world.seed, Kind.member, m.id);
    const out: MemberRec[] = [];
    if (slot !== undefined) {
      const base = slot - (slot % SLOTS_PER_HOUSEHOLD);
      for (let s = base; s < base + SLOTS_PER_HOUSEHOLD; s++) {
        const x = this.members.bySlot(s);
        if (x) out.push(x);
      }
    }
    for (const id of this.addedBySubscriber.get(m.subscriberId) ?? []) {
      const x = this.getMember(id);
      if (x) out.push(x);
    }
    return out;
  }

  /** A fresh subscriber id for a new household. */
  nextSubscriberId(): string {
    this.subscriberSeq++;
    return `S${900_000_000 + this.subscriberSeq}`;
  }

  getClaim(id: string): ClaimRec | undefined {
    return this.claims.get(id);
  }
  putClaim(c: ClaimRec): void {
    this.observer?.before("claim", c.id, this.claims.get(c.id));
    this.claims.put(c);
  }
  insertClaim(c: ClaimRec): void {
    this.observer?.before("claim", c.id, undefined);
    this.claims.insert(c);
  }
  deleteClaim(id: string): void {
    this.observer?.before("claim", id, this.claims.get(id));
    this.claims.delete(id);
  }

  getGroup(id: string): GroupRec | undefined {
    const pos = this.groupPos.get(id);
    return pos === undefined ? undefined : this.groups[pos];
  }
  groupByNumber(groupId: string): GroupRec | undefined {
    const pos = this.groupNumberPos.get(groupId);
    return pos === undefined ? undefined : this.groups[pos];
  }
  putGroup(g: GroupRec): void {
    const pos = this.groupPos.get(g.id);
    if (pos === undefined) throw new Error(`no group ${g.id}`);
    this.observer?.before("group", g.id, this.groups[pos]);
    this.groups[pos] = g;
  }
  insertGroup(g: GroupRec): void {
    this.observer?.before("group", g.id, undefined);
    this.groupPos.set(g.id, this.groups.length);
    this.groupNumberPos.set(g.groupId, this.groups.length);
    this.groups.push(g);
  }
}
