/**
 * The endpoints whose answers carry people: members (list, one, PATCH), medical claims, the
 * enroll endpoints of every version, and enrollment requests (whose `errors` may echo the
 * submitted enrollee). Any version prefix counts, so that a new version is covered before
 * anyone thinks of it.
 */
const PEOPLE_PATHS: readonly RegExp[] = [
  /\/v\d+\/members(?:\/|$)/i,
  /\/v\d+\/claims(?:\/|$)/i,
  /\/v\d+\/groups\/[^/]+\/enroll(?:\/|$)/i,
  /\/v\d+\/enrollmentRequests(?:\/|$)/i,
];

/**
 * True when an answer of this endpoint may carry a person's data, so that no error may quote it.
 * Takes a path (`/v2/members?limit=5`) or an endpoint label (`GET /v2/members`).
 *
 * @example
 * carriesPeople("PATCH /v2/members/m1") // true
 * carriesPeople("GET /v2/designs")      // false
 */
export function carriesPeople(endpoint: string): boolean {
  const path = endpoint.replace(/^[A-Z]+\s+/, "").split(/[?#]/, 1)[0] ?? "";
  return PEOPLE_PATHS.some((re) => re.test(path));
}

/**
 * Query parameters whose values say which part of the service a request walks (a page size, a
 * cursor or record id, a group, a status, a date window), never who a person is. Any other value
 * on a people endpoint (`lastName=`, `dateOfBirth=`, an email) may identify someone.
 */
const WALK_PARAMS: ReadonlySet<string> = new Set([
  "limit",
  "startAfter",
  "groupId",
  "planId",
  "memberId",
  "status",
  "effectiveDate",
  "terminationDate",
  "serviceDateFrom",
  "serviceDateTo",
]);

/**
 * A request's path as an error may show it: on an endpoint that carries people, every query value
 * not in {@link WALK_PARAMS} is withheld (its name stays, so the reader knows which filter was sent).
 *
 * @example
 * shownPath("/v2/members?groupId=G1&lastName=Roe") // "/v2/members?groupId=G1&lastName=[withheld]"
 * shownPath("/v2/designs?q=Roe")                   // "/v2/designs?q=Roe"
 */
export function shownPath(pathWithQuery: string): string {
  const at = pathWithQuery.indexOf("?");
  if (at < 0 || !carriesPeople(pathWithQuery)) return pathWithQuery;
  const params = pathWithQuery
    .slice(at + 1)
    .split("&")
    .map((pair) => {
      const eq = pair.indexOf("=");
      if (eq < 0) return pair;
      const name = pair.slice(0, eq);
      return WALK_PARAMS.has(name) ? pair : `${name}=[withheld]`;
    });
  return `${pathWithQuery.slice(0, at)}?${params.join("&")}`;
}
