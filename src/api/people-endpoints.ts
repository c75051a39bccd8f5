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
