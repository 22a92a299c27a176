// A prompt on a host whose disk is full: a 507 that keeps the OS's words and says what they mean to the client
// (nothing acknowledged was lost, this prompt was not taken) and what to do; once space is freed it goes on.
import { afterEach, describe, expect, it } from "vitest";
import { startTestDaemon } from "../testing/daemon.js";
import { collect, newSession, raw, settled } from "../testing/http.js";
import { canMount, smallDisk } from "../testing/small-disk.js";

const unmounts: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const unmount of unmounts.splice(0)) await unmount();
});

describe("a full disk", () => {
  it.skipIf(!canMount())(
    "answers a prompt 507 insufficient_storage saying what to do, and keeps what the session logged",
    async () => {
      const disk = smallDisk("1m", unmounts);
      const d = await startTestDaemon({ home: disk.home });
      try {
        const id = await newSession(d);
        const prompt = (text: string) =>
          raw(d.url, "POST", `/v1/sessions/${id}/prompt`, { token: d.tokens.admin, body: { text } });
        const first = await prompt("before");
        expect(first.status).toBe(202);
        await collect(d.client(), id, settled(first.body.turn as string));

        // More than the disk holds: its write fails with ENOSPC.
        const full = await prompt("x".repeat(1536 << 10));
        expect(full.status).toBe(507);
        expect(full.body.error).toMatchObject({
          code: "insufficient_storage",
          message: expect.stringMatching(
            /ENOSPC: no space left on device.*disk is full.*nothing the session acknowledged before it is lost.*free space/,
          ),
        });

        disk.grow();
        const after = await prompt("after");
        expect(after.status).toBe(202);
        await collect(d.client(), id, settled(after.body.turn as string));
        const prompts = (await d.client().log(id, 0, 10_000)).events.filter((e) => e.type === "user.prompt");
        expect(prompts.map((e) => e.turn)).toEqual([first.body.turn, after.body.turn]);
      } finally {
        await d.cleanup();
      }
    },
  );
});
