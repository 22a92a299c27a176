// GET /v1/sessions's body, written one session at a time as the client takes it. A page may hold 1,000 sessions
// (without `limit`, all of a tenant's), each with a config of up to 4 MiB: built whole, one answer could hold
// gigabytes of the daemon's heap. Each view is read when its turn comes, so one is held at a time.
import type { SessionView } from "../protocol/api.js";

export function streamedList(
  ids: readonly string[],
  next: string | undefined,
  view: (id: string) => Promise<SessionView | undefined>,
): Response {
  const encoder = new TextEncoder();
  let at = 0;
  let written = 0;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode('{"sessions":['));
    },
    async pull(controller) {
      while (at < ids.length) {
        // Deleted since it was listed: left out, as from a list made a moment later.
        const shown = await view(ids[at++]!);
        if (!shown) continue;
        controller.enqueue(encoder.encode(`${written++ > 0 ? "," : ""}${JSON.stringify(shown)}`));
        return;
      }
      // `next` only when a page left sessions out, as in a body built whole.
      controller.enqueue(encoder.encode(next === undefined ? "]}" : `],"next":${JSON.stringify(next)}}`));
      controller.close();
    },
  });
  return new Response(body, { headers: { "content-type": "application/json" } });
}
