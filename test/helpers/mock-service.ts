/**
 * The service as undici's MockAgent, for unit tests of the client and its callers: a fresh agent
 * per test (checked after it for answers never asked for), and every request the client hands to
 * the dispatcher counted in `hits` ("METHOD /path", query left off) before the agent answers it.
 */
import { MockAgent, type Dispatcher } from "undici";
import { afterEach, beforeEach } from "vitest";

export interface MockService {
  readonly agent: MockAgent;
  readonly hits: string[];
  /** Answer one request to `path` (any query) with `status` and `body` as JSON. */
  reply(method: string, path: string, status: number, body: unknown): void;
  /** The dispatcher to give the client: the agent, counting. */
  counting(): Dispatcher;
}

/** @example const svc = mockService("http://svc.test"); svc.reply("GET", "/v2/groups", 200, { data: [] }); */
export function mockService(origin: string): MockService {
  let agent: MockAgent | undefined;
  const hits: string[] = [];
  beforeEach(() => {
    agent = new MockAgent();
    agent.disableNetConnect();
    hits.length = 0;
  });
  afterEach(async () => {
    agent?.assertNoPendingInterceptors();
    await agent?.close();
  });
  const current = () => agent ?? (() => { throw new Error("mockService: used outside a test"); })();
  return {
    get agent() {
      return current();
    },
    hits,
    reply: (method, path, status, body) =>
      current()
        .get(origin)
        .intercept({ method, path: (p: string) => p.split("?")[0] === path })
        .reply(status, JSON.stringify(body), { headers: { "content-type": "application/json" } }),
    counting: () =>
      current().compose((dispatch) => (opts, handler) => {
        hits.push(`${opts.method} ${String(opts.path).split("?")[0]}`);
        return dispatch(opts, handler);
      }),
  };
}
