import { Agent, type Dispatcher } from "undici";
import { MedicalClaim } from "../../schemas/claim.js";
import { Design } from "../../schemas/design.js";
import { Group } from "../../schemas/group.js";
import { Member, type CoverageStatus } from "../../schemas/member.js";
import {
  type AddDependentBody,
  type AddSubscriberBody,
  type CreateGroupBody,
  type InitialEnrollmentBody,
  type PatchMemberBody,
  type TerminateBody,
} from "../../schemas/writes.js";
import type { z } from "zod";
import { NotFoundError, registerSecret } from "../errors.js";
import { resolveClientOptions, type ClientOptions } from "./client-options.js";
import { LIST_PATHS, paths, type ListResource } from "./endpoints.js";
import { pollEnrollmentRequest, type WaitOptions } from "./enrollment-wait.js";
import { groupRejection } from "./group-rejections.js";
import { redactingLogger } from "./logger.js";
import { paginate, type Page } from "./paginate.js";
import { rawList, rawListItems, topLevelString } from "./raw-items.js";
import { parseJson, unwrapList, validate } from "./shape.js";
import { createTransport, decodeUtf8, joined, type Query, type TransportStats } from "./transport.js";
import {
  answerSeen,
  readEnrolled,
  readEnrollmentAccepted,
  readEnrollmentRequest,
  readGroupCreated,
  readPatched,
  readTerminated,
  type CoverageTerminated,
  type EnrollmentAccepted,
  type EnrollmentRequestSeen,
  type GroupCreated,
  type MemberPatched,
  type MembersEnrolled,
} from "./write-answers.js";

export type { ClientOptions } from "./client-options.js";

export interface MemberFilters {
  groupId?: string | undefined;
  planId?: string | undefined;
  effectiveDate?: string | undefined;
  terminationDate?: string | undefined;
  status?: CoverageStatus | undefined;
}

/** `serviceDateFrom` / `serviceDateTo` are sent under the configured claim date parameter names. */
export interface ClaimFilters {
  groupId?: string | undefined;
  memberId?: string | undefined;
  serviceDateFrom?: string | undefined;
  serviceDateTo?: string | undefined;
}

export interface ListOptions {
  /** Resume after this id. */
  startAfter?: string | undefined;
  signal?: AbortSignal | undefined;
  /**
   * Request the next page while the caller works on this one (see `paginate`). On by default for
   * `pages` and `rawPages`, which the sync drains; off for the typed list functions, whose callers
   * may stop early.
   */
  readAhead?: boolean | undefined;
}

/**
 * Pages a caller already holds, recognised by a fingerprint of the bytes the server sent: such a
 * page is yielded as `known` (with the cursor after it) without being decoded or split into items.
 */
export interface KnownPages {
  /** A fingerprint of the body's bytes, given as the chunks they arrived in. */
  fingerprint(chunks: readonly Uint8Array[]): number;
  /** May answer later (the caller may still be asking its store while the first page is fetched). */
  lookup(startAfter: string | undefined, fp: number): { next: string | undefined } | undefined | Promise<{ next: string | undefined } | undefined>;
}

/** A client of the service: one typed function per endpoint, plus raw pages for the sync engine. */
export interface ServiceClient {
  /** The base URL in use, without a trailing slash. */
  readonly baseUrl: string;
  /**
   * Pages whose items are each item's JSON text as the server sent it, not parsed: the sync
   * engine parses them where it stores them (its own thread). Ids are read from the text.
   */
  rawPages(resource: ListResource, filters?: Record<string, string | undefined>, opts?: ListOptions & { known?: KnownPages }): AsyncGenerator<Page<string>>;
  /**
   * `GET /v1/members/{id}` as the JSON text the server sent, or undefined when it answers 404: the
   * sync's point lookup before it records a member deleted.
   */
  memberText(memberId: string, opts?: { signal?: AbortSignal | undefined }): Promise<string | undefined>;
  /** Raw pages for the sync engine: items are `unknown` (not validated), so one bad item can be quarantined. */
  pages(resource: ListResource, filters?: Record<string, string | undefined>, opts?: ListOptions): AsyncGenerator<Page<unknown>>;
  /** `GET /v2/designs`, every item validated. */
  listDesigns(opts?: ListOptions): AsyncGenerator<Design>;
  /** `GET /v2/groups`, every item validated. */
  listGroups(opts?: ListOptions): AsyncGenerator<Group>;
  /** `GET /v2/members` with filters, every item validated. */
  listMembers(filters?: MemberFilters, opts?: ListOptions): AsyncGenerator<Member>;
  /** `GET /v1/claims/medical` with filters, every item validated. */
  listMedicalClaims(filters?: ClaimFilters, opts?: ListOptions): AsyncGenerator<MedicalClaim>;
  /*
   * The writes read every plausible answer shape (write-answers.ts): what the answer identified,
   * `undefined` where it did not say, and `answer` (status and shape) recording what came.
   */
  /**
   * `POST /v2/groups`; `groupPolicyId` undefined when the answer did not name it (list groups to find
   * it). The spec's three refusals throw `GroupTakenError`, `EinOverlapError`, `UnknownReferenceError`.
   */
  createGroup(body: CreateGroupBody): Promise<GroupCreated>;
  /** `POST /v2/groups/{groupPolicyId}/enroll/initial-enrollment`. */
  initialEnrollment(groupPolicyId: string, body: InitialEnrollmentBody): Promise<MembersEnrolled>;
  /** `POST /v3/groups/{groupPolicyId}/enroll/add-subscriber`: answers an enrollment request to poll. */
  addSubscriber(groupPolicyId: string, body: AddSubscriberBody): Promise<EnrollmentAccepted>;
  /** `GET /v1/enrollmentRequests/{id}`: `status` is the documented one, `rawStatus` what the service sent. */
  getEnrollmentRequest(id: string, opts?: { signal?: AbortSignal | undefined }): Promise<EnrollmentRequestSeen>;
  /** Poll until `succeeded` or `failed`; `TimeoutError` after `timeoutMs` (default 120 s). */
  waitForEnrollmentRequest(id: string, opts?: WaitOptions): Promise<EnrollmentRequestSeen>;
  /** `POST /v3/groups/{groupPolicyId}/enroll/{subscriberCoverageId}/add-dependent`. */
  addDependent(groupPolicyId: string, subscriberCoverageId: string, body: AddDependentBody): Promise<EnrollmentAccepted>;
  /** `POST /v3/groups/{groupPolicyId}/enroll/terminate`: the coverage when the answer carried it (a 204 does not). */
  terminate(groupPolicyId: string, body: TerminateBody): Promise<CoverageTerminated>;
  /** `GET /v1/members/{memberId}`. */
  getMember(memberId: string, opts?: { signal?: AbortSignal | undefined }): Promise<Member>;
  /** `PATCH /v2/members/{memberId}`; `member` undefined when the answer did not carry it. */
  patchMember(memberId: string, body: PatchMemberBody): Promise<MemberPatched>;
  /** Low-level: one GET with retries, JSON-parsed, shape unchecked (used by doctor). `path` starts with `/`. */
  getJson(path: string, query?: Record<string, string | undefined>, opts?: { signal?: AbortSignal | undefined }): Promise<unknown>;
  /** Counters, for progress and the benchmark. */
  readonly stats: Readonly<TransportStats>;
  /** Close the Agent this client created (an injected dispatcher is left to its owner). */
  close(): Promise<void>;
}

/**
 * Create a client of the service. The key goes out as `authorization: Bearer <key>` on every
 * request and is registered for redaction, so no error or log line carries it.
 *
 * @example
 * const client = createClient({ baseUrl: "http://127.0.0.1:4010", apiKey: process.env.BENEFITS_API_KEY! });
 * for await (const member of client.listMembers({ status: "active" })) console.log(member.id);
 * await client.close();
 */
export function createClient(options: ClientOptions): ServiceClient {
  registerSecret(options.apiKey);
  const o = resolveClientOptions(options);
  const ownAgent =
    o.dispatcher === undefined
      ? new Agent({
          connect: { timeout: o.deadlines.connectMs },
          headersTimeout: o.deadlines.headersMs,
          bodyTimeout: o.deadlines.bodyMs,
        })
      : undefined;
  const dispatcher: Dispatcher = o.dispatcher ?? (ownAgent as Agent);
  const log = redactingLogger(o.logger);
  const transport = createTransport({ ...o, dispatcher, logger: log });

  const get = (path: string, query?: Query, signal?: AbortSignal) => transport.send({ method: "GET", path, query, signal });
  /** One write; its answer's status and shape are logged (types only: these bodies carry people). */
  const write = async (method: "POST" | "PATCH", path: string, body: unknown) => {
    const { value, status } = await transport.sendWithText({ method, path, body });
    log.debug("write answer", { method, path, status, shape: answerSeen(status, value).shape });
    return { value, status };
  };

  function listQuery(resource: ListResource, filters: Record<string, string | undefined>): Query {
    const size = o.pageSize[resource] ?? o.pageSize.default;
    const query: Query = { limit: size === undefined ? undefined : String(size) };
    for (const [k, v] of Object.entries(filters)) {
      // The spec does not name the claim date parameters: the canonical names map to configured ones.
      const key =
        resource === "claims" && k === "serviceDateFrom" ? o.claimDateParams.from
        : resource === "claims" && k === "serviceDateTo" ? o.claimDateParams.to
        : k;
      query[key] = v;
    }
    return query;
  }

  function pages(resource: ListResource, filters: Record<string, string | undefined> = {}, opts: ListOptions = {}) {
    const path = LIST_PATHS[resource];
    const query = listQuery(resource, filters);
    const idField = o.idFields[resource];
    const idOf =
      idField === undefined || idField === "id"
        ? undefined
        : (item: unknown) => {
            const id = item !== null && typeof item === "object" ? (item as Record<string, unknown>)[idField] : undefined;
            return typeof id === "string" && id !== "" ? id : undefined;
          };
    return paginate(
      async (startAfter) => {
        const { value, text } = await transport.sendWithText({ method: "GET", path, query: { ...query, startAfter }, signal: opts.signal });
        const page = unwrapList(value, `GET ${path}`);
        // The items' own text lets the sync skip re-serialising records that did not change.
        const raw = rawListItems(text);
        return raw && raw.length === page.items.length ? { ...page, raw } : page;
      },
      { startAfter: opts.startAfter, idOf, readAhead: opts.readAhead ?? true },
    );
  }

  function rawPages(resource: ListResource, filters: Record<string, string | undefined> = {}, opts: ListOptions & { known?: KnownPages } = {}) {
    const path = LIST_PATHS[resource];
    const query = listQuery(resource, filters);
    const idField = o.idFields[resource] ?? "id";
    return paginate<string>(
      async (startAfter) => {
        const chunks = await transport.sendForChunks({ method: "GET", path, query: { ...query, startAfter }, signal: opts.signal });
        const fp = opts.known?.fingerprint(chunks);
        const known = fp === undefined ? undefined : await opts.known!.lookup(startAfter, fp);
        if (known) return { items: [], known, fp };
        const text = decodeUtf8(joined(chunks));
        const list = rawList(text);
        if (list) return { ...list, ...(fp !== undefined ? { fp } : {}) };
        // An envelope the scan does not know: parse it, and let unwrapList say what is wrong.
        const page = unwrapList(parseJson(text, `GET ${path}`), `GET ${path}`);
        return { items: page.items.map((item) => JSON.stringify(item)), hasMore: page.hasMore };
      },
      { startAfter: opts.startAfter, readAhead: opts.readAhead ?? true, idOf: (text) => (text.charCodeAt(0) === 0x7b ? topLevelString(text, idField) : undefined) || undefined },
    );
  }

  async function* typed<S extends z.ZodType>(
    resource: ListResource,
    schema: S,
    what: string,
    filters: Record<string, string | undefined> | undefined,
    opts: ListOptions | undefined,
  ): AsyncGenerator<z.infer<S>> {
    for await (const page of pages(resource, filters, { readAhead: false, ...opts })) {
      for (const [i, item] of page.items.entries()) {
        yield validate(schema, item, `GET ${LIST_PATHS[resource]}`, `${what} (page ${page.index}, item ${i})`);
      }
    }
  }

  const getEnrollmentRequest = async (id: string, opts: { signal?: AbortSignal | undefined } = {}) => {
    const path = paths.enrollmentRequest(id);
    return readEnrollmentRequest(await get(path, undefined, opts.signal), id, `GET ${path}`);
  };

  return {
    baseUrl: o.baseUrl,
    pages,
    rawPages,
    listDesigns: (opts) => typed("designs", Design, "Design", undefined, opts),
    listGroups: (opts) => typed("groups", Group, "Group", undefined, opts),
    listMembers: (filters, opts) => typed("members", Member, "Member", { ...filters }, opts),
    listMedicalClaims: (filters, opts) => typed("claims", MedicalClaim, "MedicalClaim", { ...filters }, opts),
    async createGroup(body) {
      // The spec's three refusals become typed errors naming the field (group-rejections.ts).
      const { value, status } = await write("POST", paths.groups(), body).catch((err: unknown) => Promise.reject(groupRejection(err, body)));
      return readGroupCreated(status, value);
    },
    async initialEnrollment(groupPolicyId, body) {
      const { value, status } = await write("POST", paths.initialEnrollment(groupPolicyId), body);
      return readEnrolled(status, value);
    },
    async addSubscriber(groupPolicyId, body) {
      const { value, status } = await write("POST", paths.addSubscriber(groupPolicyId), body);
      return readEnrollmentAccepted(status, value);
    },
    getEnrollmentRequest,
    waitForEnrollmentRequest: (id, opts = {}) =>
      pollEnrollmentRequest((signal) => getEnrollmentRequest(id, { signal }), id, opts, o.sleep, o.random),
    async addDependent(groupPolicyId, subscriberCoverageId, body) {
      const { value, status } = await write("POST", paths.addDependent(groupPolicyId, subscriberCoverageId), body);
      return readEnrollmentAccepted(status, value);
    },
    async terminate(groupPolicyId, body) {
      const { value, status } = await write("POST", paths.terminate(groupPolicyId), body);
      return readTerminated(status, value, body.coverageId);
    },
    async memberText(memberId, opts = {}) {
      const path = paths.member(memberId);
      try {
        const { text } = await transport.sendWithText({ method: "GET", path, signal: opts.signal, noParse: true });
        return text;
      } catch (e) {
        if (e instanceof NotFoundError) return undefined;
        throw e;
      }
    },
    async getMember(memberId, opts = {}) {
      const path = paths.member(memberId);
      return validate(Member, await get(path, undefined, opts.signal), `GET ${path}`, "Member");
    },
    async patchMember(memberId, body) {
      const { value, status } = await write("PATCH", paths.patchMember(memberId), body);
      return readPatched(status, value);
    },
    getJson(path, query, opts = {}) {
      if (!path.startsWith("/")) throw new TypeError(`getJson: path must start with "/", got ${JSON.stringify(path)}`);
      return get(path, query, opts.signal);
    },
    stats: transport.stats,
    async close() {
      await ownAgent?.close();
    },
  };
}
