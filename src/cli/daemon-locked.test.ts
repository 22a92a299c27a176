// `brain checkpoint`, `brain sessions rebuild` and `brain sessions compact` of a session the daemon has open: refused
// (one process writes a session at a time), and the refusal must say how to do it through the daemon. It said to use
// `brain run --server` or `brain attach`, neither of which checkpoints, rebuilds or compacts, so a user who followed
// it could do none of them.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { expect, it } from "vitest";
import { root } from "../testing/brain-cli.js";
import { startTestDaemon } from "../testing/daemon.js";
import { collect, raw, settled } from "../testing/http.js";

/** Runs the brain command on `home` (not spawnSync: the daemon in this process keeps serving meanwhile). */
async function brainOn(home: string, args: string[]): Promise<{ code: unknown; err: string }> {
  const cli = spawn(process.execPath, [join(root, "bin/brain.js"), ...args], {
    env: { ...process.env, BRAIN_HOME: home },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let err = "";
  cli.stderr.on("data", (chunk) => {
    err += chunk;
  });
  const code = await new Promise((resolve) => cli.once("exit", resolve));
  return { code, err };
}

it("refuses `brain checkpoint` of a session the daemon has open, naming the daemon's route that takes it", async () => {
  const d = await startTestDaemon();
  try {
    const client = d.client();
    const { id } = await client.create({ harness: "echo" });
    await collect(client, id, settled((await client.prompt(id, "from the daemon")).turn));
    const { code, err } = await brainOn(d.home, ["checkpoint", id]);
    expect(code).toBe(1);
    expect(err).toContain(`session ${id} is open in the Brain daemon at ${d.url} (pid ${process.pid})`);
    const route = `/v1/sessions/${id}/checkpoints`;
    expect(err).toContain(`POST ${d.url}${route}`);
    expect(err).not.toContain("brain run --server");
    // What it names takes the checkpoint.
    const taken = await raw(d.url, "POST", route, { token: d.tokens.admin });
    expect(taken.status, JSON.stringify(taken.body)).toBe(201);
  } finally {
    await d.cleanup();
  }
});

it("refuses `brain sessions rebuild` of a session the daemon has open, naming the daemon's route that rebuilds it", async () => {
  const d = await startTestDaemon();
  try {
    const client = d.client();
    const { id } = await client.create({ harness: "echo" });
    await collect(client, id, settled((await client.prompt(id, "from the daemon")).turn));
    const { code, err } = await brainOn(d.home, ["sessions", "rebuild", id]);
    expect(code).toBe(1);
    const route = `/v1/sessions/${id}/rebuild`;
    expect(err).toContain(`POST ${d.url}${route}`);
    expect(err).not.toContain("brain run --server");
    const rebuilt = await raw(d.url, "POST", route, { token: d.tokens.admin, body: {} });
    expect(rebuilt.status, JSON.stringify(rebuilt.body)).toBe(200);
  } finally {
    await d.cleanup();
  }
});

it("refuses `brain sessions compact` of a session the daemon has open, naming the daemon's route that closes it", async () => {
  const d = await startTestDaemon();
  try {
    const client = d.client();
    const { id } = await client.create({ harness: "echo" });
    await collect(client, id, settled((await client.prompt(id, "from the daemon")).turn));
    const refused = await brainOn(d.home, ["sessions", "compact", id]);
    expect(refused.code).toBe(1);
    const route = `/v1/sessions/${id}/close`;
    expect(refused.err).toContain(`POST ${d.url}${route}`);
    expect(refused.err).not.toContain("brain run --server");
    // Once closed as it says, the log is compacted.
    const closed = await raw(d.url, "POST", route, { token: d.tokens.admin });
    expect(closed.status, JSON.stringify(closed.body)).toBeLessThan(300);
    expect(await brainOn(d.home, ["sessions", "compact", id])).toMatchObject({ code: 0, err: "" });
  } finally {
    await d.cleanup();
  }
});
