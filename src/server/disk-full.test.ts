// A prompt on a host whose disk is full: a 507 that keeps the OS's words and says what they mean to the client
// (nothing acknowledged was lost, this prompt was not taken) and what to do; once space is freed it goes on.
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import path from "node:path";
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

  it.skipIf(!canMount())(
    "answers a checkpoint and a fork 507 insufficient_storage, as it answers a prompt, and both work once space is freed",
    async () => {
      const disk = smallDisk("1m", unmounts);
      const d = await startTestDaemon({ home: disk.home });
      try {
        const id = await newSession(d);
        const call = (route: string) =>
          raw(d.url, "POST", `/v1/sessions/${id}/${route}`, { token: d.tokens.admin, body: {} });
        const first = await raw(d.url, "POST", `/v1/sessions/${id}/prompt`, {
          token: d.tokens.admin,
          body: { text: "remember KIWI" },
        });
        await collect(d.client(), id, settled(first.body.turn as string));
        expect((await call("checkpoints")).status).toBe(201);

        // Every block of the disk taken: the checkpoint's blob and the fork's files find no room.
        const filler = path.join(disk.home, "filler");
        try {
          execFileSync("dd", ["if=/dev/zero", `of=${filler}`, "bs=4k"], { stdio: "ignore" });
        } catch {
          // dd stops with ENOSPC once the disk is full, as meant
        }
        const checkpoint = await call("checkpoints");
        expect([checkpoint.status, checkpoint.body.error]).toEqual([
          507,
          {
            code: "insufficient_storage",
            message: expect.stringMatching(
              /^checkpoint failed: .*ENOSPC.*no checkpoint was made: free space/,
            ),
          },
        ]);
        const fork = await call("fork");
        expect([fork.status, fork.body.error]).toEqual([
          507,
          {
            code: "insufficient_storage",
            // The fork's record or its restored files, whichever the disk refuses first.
            message: expect.stringMatching(/ENOSPC.*free space on the daemon's disk/),
          },
        ]);

        // The refused fork left no session behind.
        const listed = await raw(d.url, "GET", "/v1/sessions", { token: d.tokens.admin });
        expect((listed.body.sessions as { id: string }[]).map((s) => s.id)).toEqual([id]);

        rmSync(filler);
        expect((await call("checkpoints")).body).toMatchObject({ id: "000002" });
        expect((await call("fork")).status).toBe(201);
      } finally {
        await d.cleanup();
      }
    },
  );
});
