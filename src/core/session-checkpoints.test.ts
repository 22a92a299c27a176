// Checkpoints against turns: a checkpoint holds the native state of exactly the turns the log places before its
// checkpoint.created (a prompt sent while one is taken starts its turn after it; a checkpoint asked for while a
// turn runs or starts is refused), and it holds none of the values the session's log redacts.
import { rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { events, makeBrain, type TestBrain, textOf } from "../testing/brain.js";
import { CheckpointStore } from "./checkpoints/index.js";
import type { Session } from "./session.js";

/** Makes the store's next blob commit wait until released: a checkpoint caught midway, as the fs store writes it. */
function holdNextBlob(brain: TestBrain, extra: { checkpointEveryTurn?: boolean } = {}) {
  let reached!: () => void;
  let release!: () => void;
  const atCommit = new Promise<void>((resolve) => (reached = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  let held = false;
  const beforeBlobCommit = async () => {
    if (held) return;
    held = true;
    reached();
    await released;
  };
  Object.assign(brain.store, extra, {
    checkpoints: (id: string) =>
      new CheckpointStore(brain.store.paths(id).checkpoints, { hooks: { beforeBlobCommit } }),
  });
  return { atCommit, release };
}

const typesOf = async (session: Session) => (await events(session)).map((e) => e.type);

let t: TestBrain;

/**
 * A checkpoint of the session's echo.jsonl whose manifest is written but never logged: what a host killed between
 * a checkpoint's manifest and its checkpoint.created leaves behind.
 */
function orphanCheckpoint(id: string) {
  const paths = t.store.paths(id);
  const size = statSync(join(paths.native, "echo.jsonl")).size;
  return new CheckpointStore(paths.checkpoints).create(paths.native, [
    { path: "echo.jsonl", size, append_only: true },
  ]);
}
afterEach(async () => {
  await t?.cleanup();
});

describe("checkpoints between turns", () => {
  it("starts a prompt sent during a checkpoint after it, and refuses a checkpoint while that prompt waits", async () => {
    t = makeBrain();
    const hold = holdNextBlob(t);
    const session = await t.brain.create({ harness: "echo" });
    await (await session.prompt("first")).settled;
    const checkpoint = session.checkpoint();
    await hold.atCommit;
    const prompted = session.prompt("second");
    await expect(session.checkpoint()).rejects.toMatchObject({
      code: "conflict",
      message: expect.stringContaining("a prompt is starting a turn"),
    });
    hold.release();
    const manifest = await checkpoint;
    await (await prompted).settled;
    expect((await typesOf(session)).slice(8, 11)).toEqual([
      "checkpoint.created",
      "user.prompt",
      "turn.started",
    ]);
    // The log places the checkpoint where its files are: a fork of it continues from the first turn.
    const fork = await t.brain.fork(session.id, manifest.id);
    const turn = await fork.prompt("third");
    expect((await turn.settled).status).toBe("completed");
    expect(textOf(await events(fork), turn.turn)).toBe("echo #2: third");
  });

  it("refuses a checkpoint asked for while a prompt starts its turn", async () => {
    t = makeBrain();
    const session = await t.brain.create({ harness: "echo" });
    const prompted = session.prompt("first");
    await expect(session.checkpoint()).rejects.toMatchObject({ code: "conflict" });
    await (await prompted).settled;
    expect((await session.checkpoint()).files.map((f) => f.path)).toEqual(["echo.jsonl"]);
  });

  it("cluster mode: a prompt sent as a turn settles waits for the checkpoint taken after that turn", async () => {
    t = makeBrain();
    const hold = holdNextBlob(t, { checkpointEveryTurn: true });
    const session = await t.brain.create({ harness: "echo" });
    const first = await session.prompt("first");
    await hold.atCommit; // turn.settled is durable, the checkpoint after it is being written
    const second = session.prompt("second");
    hold.release();
    await first.settled;
    await (await second).settled;
    const types = await typesOf(session);
    expect(types.slice(7, 10)).toEqual(["turn.settled", "checkpoint.created", "user.prompt"]);
    expect(types.filter((type) => type === "checkpoint.created")).toHaveLength(2);
  });

  it("closes a session only once the checkpoint being taken is logged: a fork of it continues from there", async () => {
    t = makeBrain();
    const hold = holdNextBlob(t);
    const session = await t.brain.create({ harness: "echo" });
    await (await session.prompt("first")).settled;
    const checkpoint = session.checkpoint();
    await hold.atCommit;
    let logClosing!: () => void;
    const logClosed = new Promise<void>((resolve) => (logClosing = resolve));
    const closeLog = session.log.close.bind(session.log);
    session.log.close = () => {
      logClosing();
      return closeLog();
    };
    const closing = t.brain.closeSession(session.id);
    // A close that does not wait for the checkpoint closes the log under it; one that waits never gets there, so
    // the blob is released after a while instead (nothing is asserted of the time).
    await Promise.race([logClosed, new Promise((resolve) => setTimeout(resolve, 2_000))]);
    hold.release();
    const manifest = await checkpoint;
    await closing;
    // Its manifest was listed while the log had no checkpoint.created: the fork's history ran past its files.
    const reopened = await t.brain.session(session.id);
    await (await reopened.prompt("second")).settled;
    expect((await typesOf(reopened)).filter((type) => type === "checkpoint.created")).toHaveLength(1);
    const fork = await t.brain.fork(session.id, manifest.id);
    const turn = await fork.prompt("third");
    expect(await turn.settled).toMatchObject({ status: "completed" });
    expect(textOf(await events(fork), turn.turn)).toBe("echo #2: third");
  });

  it("forks only checkpoints the log records, not a manifest written as the host stopped", async () => {
    t = makeBrain();
    const session = await t.brain.create({ harness: "echo" });
    await (await session.prompt("first")).settled;
    const logged = await session.checkpoint();
    await (await session.prompt("second")).settled;
    const orphan = await orphanCheckpoint(session.id);
    await (await session.prompt("third")).settled;
    await expect(t.brain.fork(session.id, orphan.id)).rejects.toMatchObject({
      code: "bad_request",
      message: expect.stringContaining(`it records ${logged.id}, or "latest"`),
    });
    const fork = await t.brain.fork(session.id, "latest");
    const turn = await fork.prompt("fourth");
    expect(await turn.settled).toMatchObject({ status: "completed" });
    expect(textOf(await events(fork), turn.turn)).toBe("echo #2: fourth");
  });

  it("restores only checkpoints the log records: latest is not a manifest written as the host stopped", async () => {
    t = makeBrain();
    const session = await t.brain.create({ harness: "echo" });
    await (await session.prompt("first")).settled;
    const logged = await session.checkpoint();
    await (await session.prompt("second")).settled;
    const orphan = await orphanCheckpoint(session.id);
    await t.brain.closeSession(session.id);
    const into = `${t.home}.restored`;
    const id = await t.brain.restore(session.id, "latest", into);
    const restored = statSync(join(into, "echo.jsonl")).size;
    rmSync(into, { recursive: true });
    expect(restored).toBe(logged.files[0]!.size);
    expect(id).toBe(logged.id);
    await expect(t.brain.restore(session.id, orphan.id, `${t.home}.orphan`)).rejects.toMatchObject({
      code: "bad_request",
      message: expect.stringContaining(`it records ${logged.id}, or "latest"`),
    });
  });

  it("says how to make one when a fork or a restore finds no checkpoint", async () => {
    t = makeBrain();
    const session = await t.brain.create({ harness: "echo" });
    await (await session.prompt("first")).settled;
    await expect(t.brain.fork(session.id)).rejects.toMatchObject({
      code: "bad_request",
      message: expect.stringContaining(
        `it records none: checkpoint the session between turns first (brain checkpoint ${session.id}, or POST /v1/sessions/${session.id}/checkpoints)`,
      ),
    });
    await expect(t.brain.restore(session.id, "latest", `${t.home}.restored`)).rejects.toMatchObject({
      code: "bad_request",
      message: expect.stringContaining(
        `it records none: checkpoint the session between turns first (brain checkpoint ${session.id}`,
      ),
    });
  });

  it("keeps a fork's history its own when its deleted parent's id is given to a new session", async () => {
    t = makeBrain();
    const parent = await t.brain.create({ harness: "echo", id: "parent-x" });
    await (await parent.prompt("the old plan")).settled;
    const fork = await t.brain.fork("parent-x", (await parent.checkpoint()).id);
    await t.brain.closeSession(fork.id);
    await t.brain.delete("parent-x");
    const stranger = await t.brain.create({ harness: "echo", id: "parent-x" });
    await (await stranger.prompt("another conversation")).settled;
    await stranger.checkpoint();
    // The fork opens again: its check must not expect the new session's prompt in its files.
    const reopened = await t.brain.session(fork.id);
    const turn = await reopened.prompt("go on");
    expect(await turn.settled).toMatchObject({ status: "completed" });
    expect(textOf(await events(reopened), turn.turn)).toBe("echo #2: go on");
  });

  it("refuses a checkpoint whose files hold a value the log redacts, naming where it came from", async () => {
    const token = "ghp_test-token-value-0123456789";
    t = makeBrain();
    const session = await t.brain.create({
      harness: "echo",
      config: { options: { env: { GITHUB_TOKEN: token } } },
    });
    await (await session.prompt(`the token is ${token}`)).settled;
    expect(JSON.stringify(await events(session))).not.toContain(token);
    const refused = await session.checkpoint().catch((err: Error) => err);
    expect(refused).toMatchObject({ message: expect.stringContaining("the value of GITHUB_TOKEN") });
    expect((refused as Error).message).not.toContain(token);
    expect(await typesOf(session)).not.toContain("checkpoint.created");
  });

  it("names the way on when a credential is refused: a rebuild from the log, where it is redacted", async () => {
    // The file is append-only: every later checkpoint of the session would find the value again, and with no
    // checkpoint it can never be forked. The refusal said only to keep credentials out, which was too late.
    const token = "ghp_test-token-value-9876543210";
    t = makeBrain();
    const session = await t.brain.create({
      harness: "echo",
      config: { options: { env: { GITHUB_TOKEN: token } } },
    });
    await (await session.prompt(`the token is ${token}`)).settled;
    const refused = await session.checkpoint().catch((err: Error) => err);
    expect((refused as Error).message).toContain(
      `brain sessions rebuild ${session.id}, or POST /v1/sessions/${session.id}/rebuild`,
    );
    await t.brain.rebuild(session.id);
    const taken = await (await t.brain.session(session.id)).checkpoint();
    expect(taken.id).toBe("000001");
  });
});
