/**
 * Every endpoint of the service at its own version prefix, as in the spec's endpoint table.
 * Path parameters are URL-encoded, and `.`/`..` are escaped too, because URL parsing would
 * otherwise resolve them and send the request to a different endpoint.
 */
export const ListResources = ["designs", "groups", "members", "claims"] as const;
export type ListResource = (typeof ListResources)[number];

/** The list endpoint of each resource the sync engine walks. */
export const LIST_PATHS: Readonly<Record<ListResource, string>> = Object.freeze({
  designs: "/v2/designs",
  groups: "/v2/groups",
  members: "/v2/members",
  claims: "/v1/claims/medical",
});

/**
 * Encode one path segment; throws a TypeError for an empty one (it would silently hit another endpoint).
 *
 * @example
 * segment("a/b c") // "a%2Fb%20c"
 */
export function segment(value: string, name: string): string {
  if (typeof value !== "string" || value === "") throw new TypeError(`${name} must be a non-empty string`);
  if (value === "." || value === "..") return value.replace(/\./g, "%2E");
  return encodeURIComponent(value);
}

/** Path builders, one per endpoint of the spec. */
export const paths = {
  designs: () => "/v2/designs",
  groups: () => "/v2/groups",
  initialEnrollment: (groupPolicyId: string) => `/v2/groups/${segment(groupPolicyId, "groupPolicyId")}/enroll/initial-enrollment`,
  addSubscriber: (groupPolicyId: string) => `/v3/groups/${segment(groupPolicyId, "groupPolicyId")}/enroll/add-subscriber`,
  enrollmentRequest: (id: string) => `/v1/enrollmentRequests/${segment(id, "enrollmentRequestId")}`,
  addDependent: (groupPolicyId: string, subscriberCoverageId: string) =>
    `/v3/groups/${segment(groupPolicyId, "groupPolicyId")}/enroll/${segment(subscriberCoverageId, "subscriberCoverageId")}/add-dependent`,
  terminate: (groupPolicyId: string) => `/v3/groups/${segment(groupPolicyId, "groupPolicyId")}/enroll/terminate`,
  members: () => "/v2/members",
  member: (memberId: string) => `/v1/members/${segment(memberId, "memberId")}`,
  patchMember: (memberId: string) => `/v2/members/${segment(memberId, "memberId")}`,
  medicalClaims: () => "/v1/claims/medical",
} as const;

/** The placeholder a template shows for every path parameter. */
const PARAM = "{id}";

/**
 * Every endpoint's path with its parameters as `{id}`, from the builders above (one table of the
 * endpoints): what a span names a request by (`url.template`), since a path may hold a person's id.
 */
export const ROUTE_TEMPLATES: readonly string[] = Object.values(paths).map((build) => {
  const marker = "routeparam";
  const path = (build as (...ids: string[]) => string)(...new Array<string>(build.length).fill(marker));
  return path.split(marker).join(PARAM);
});

const ROUTE_PATTERNS = ROUTE_TEMPLATES.map((t) => [new RegExp(`^${t.split(PARAM).map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("[^/]+")}$`), t] as const);

/**
 * The template of a request's path (its query dropped), or undefined for a path that is no
 * endpoint of the table (`getJson`'s): never the path itself.
 *
 * @example
 * routeOf("/v1/members/M0001?x=1") // "/v1/members/{id}"
 * routeOf("/v2/members")           // "/v2/members"
 */
export function routeOf(path: string): string | undefined {
  const bare = path.split(/[?#]/, 1)[0] ?? "";
  return ROUTE_PATTERNS.find(([re]) => re.test(bare))?.[1];
}
