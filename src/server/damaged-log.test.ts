// A session whose log is damaged in the middle (a line that is not the torn last one a crash leaves: bit rot, a bad
// edit): a prompt needs the log (the harness checks its history in it before the turn) and is refused at once,
// naming the session, the file and the byte, and what to do; it was taken (202) and its turn failed on the read.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestDaemon, type TestDaemon } from "../testing/daemon.js";
import { collect, settled } from "../testing/http.js";

let t: TestDaemon;
afterAll(() => t?.cleanup());
beforeAll(async () => {
  t = await startTestDaemon();
});

const call = (method: string, path: string, body?: unknown) =>
  fetch(`${t.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${t.tokens.admin}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

it("refuses a prompt on a log damaged in the middle, naming the session, the file and the byte", async () => {
  const client = t.client();
  const { id } = await client.create({ harness: "echo" });
  await collect(client, id, settled((await client.prompt(id, "one two")).turn));
  await client.close(id);
  const file = join(t.home, "sessions", id, "events.jsonl");
  const text = readFileSync(file, "utf8");
  // Bit rot in seq 3's line, its length kept: the log's saved state still covers it, so the open reads past it.
  const at = text.indexOf('{"seq":3,');
  const damaged = `${text.slice(0, at)}#${text.slice(at + 1)}`;
  writeFileSync(file, damaged);

  const res = await call("POST", `/v1/sessions/${id}/prompt`, { text: "three" });
  const body = (await res.json()) as { error: { code: string; message: string } };
  expect({ status: res.status, body }).toMatchObject({
    status: 500,
    body: { error: { code: "brain_error" } },
  });
  expect(body.error.message).toContain(`sessions/${id}/events.jsonl: byte ${at}: not valid JSON`);
  expect(body.error.message).toContain(`The log of session ${id} is damaged there`);
  expect(body.error.message).toContain(`delete the session (DELETE /v1/sessions/${id}`);
  // Nothing was taken: no user.prompt after the damage.
  expect(readFileSync(file, "utf8").startsWith(damaged)).toBe(true);
  expect(readFileSync(file, "utf8")).not.toContain('"text":"three"');

  // The other commands that read the log say the same: a checkpoint (its harness checks its history first) and a
  // fork (it looks for the checkpoint in the log).
  for (const [path, body] of [
    [`/v1/sessions/${id}/checkpoints`, undefined],
    [`/v1/sessions/${id}/fork`, {}],
  ] as const) {
    const refused = await call("POST", path, body);
    const message = ((await refused.json()) as { error: { message: string } }).error.message;
    expect({ path, status: refused.status, message }).toMatchObject({
      status: 500,
      message: expect.stringContaining(`events.jsonl: byte ${at}: not valid JSON`),
    });
    expect(message).toContain(`The log of session ${id} is damaged there`);
  }

  // Its record still reads, and the session can be deleted as the message says.
  expect((await call("GET", `/v1/sessions/${id}`)).status).toBe(200);
  expect((await call("DELETE", `/v1/sessions/${id}`)).status).toBeLessThan(300);
  expect((await call("GET", `/v1/sessions/${id}`)).status).toBe(404);
});
