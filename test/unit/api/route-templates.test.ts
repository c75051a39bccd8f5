/**
 * A request is named in a span by its endpoint's template, never by its path: a member's id is a
 * person's. Every endpoint of the table has its template, whatever its parameters hold.
 */
import { describe, expect, it } from "vitest";
import { LIST_PATHS, paths, ROUTE_TEMPLATES, routeOf } from "../../../src/api/endpoints.js";

const ids = ["5db55837-dd0e-44f7-9dd0-5f350db2cbe9", "a/b c", "..", "x?y#z", "338-10-5506"];

describe("routeOf", () => {
  it("has a template for every endpoint, its parameters as {id}", () => {
    expect(ROUTE_TEMPLATES).toHaveLength(Object.keys(paths).length);
    expect(ROUTE_TEMPLATES).toContain("/v1/members/{id}");
    expect(ROUTE_TEMPLATES).toContain("/v3/groups/{id}/enroll/{id}/add-dependent");
    for (const p of Object.values(LIST_PATHS)) expect(ROUTE_TEMPLATES).toContain(p);
  });

  it("names each endpoint's path by its template, whatever the ids and the query", () => {
    for (const [name, build] of Object.entries(paths)) {
      for (const id of ids) {
        const path = (build as (...a: string[]) => string)(...new Array<string>(build.length).fill(id));
        const route = routeOf(`${path}?startAfter=${encodeURIComponent(id)}&lastName=Roe`);
        expect(route, name).toBe(ROUTE_TEMPLATES[Object.keys(paths).indexOf(name)]);
        if (build.length > 0) expect(route).not.toContain(encodeURIComponent(id));
      }
    }
  });

  it("gives nothing for a path outside the table, rather than the path", () => {
    expect(routeOf("/v1/members/m1/extra")).toBeUndefined();
    expect(routeOf("/v9/people/338-10-5506")).toBeUndefined();
    expect(routeOf("/v2/designs")).toBe("/v2/designs");
  });
});
