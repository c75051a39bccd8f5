/**
 * A snapshot is bound to the service it copies (store/file/service-identity.ts) only once that service
 * has answered: a first sync against a mistyped URL must not tie the new file to that URL forever.
 * The run's page source is wrapped so that its first answer, of any kind, binds the snapshot before
 * the walk goes on; a run that never got an answer leaves only its failed run behind.
 */
import type { PageSource } from "../extract/page-source.js";

/**
 * `source`, calling `bind` once, after its first answer and before that answer is handed on. A
 * `bind` that throws fails the walk (and is tried again on the next answer of a walk that goes on).
 *
 * @example sync({ source: bindOnFirstAnswer(client, () => recordService()), ... })
 */
export function bindOnFirstAnswer(source: PageSource, bind: () => void): PageSource {
  let bound = false;
  const answered = () => {
    if (bound) return;
    bind();
    bound = true;
  };
  async function* each<T>(pages: AsyncGenerator<T>): AsyncGenerator<T> {
    for await (const page of pages) {
      answered();
      yield page;
    }
  }
  const memberText = source.memberText?.bind(source);
  const rawPages = source.rawPages?.bind(source);
  return {
    pages: (resource, filters, opts) => each(source.pages(resource, filters, opts)),
    ...(rawPages ? { rawPages: (resource, filters, opts) => each(rawPages(resource, filters, opts)) } : {}),
    ...(memberText
      ? {
          memberText: async (id, opts) => {
            const text = await memberText(id, opts);
            answered();
            return text;
          },
        }
      : {}),
  } satisfies PageSource;
}
