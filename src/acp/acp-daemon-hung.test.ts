// `brain acp --server URL` whose daemon takes connections and answers nothing (hung: a node:http stand-in in front of
// a real daemon that stops answering, as a SIGSTOPped `brain serve` would). Once a prompt has given up on it, each
// later request would wait the whole $BRAIN_SERVER_TIMEOUT for nothing: it asks GET /healthz for a moment first and
// is refused at once with the prompt's words, until the daemon answers again.
import { afterEach, expect, it, vi } from "vitest";
import { connectEditor, newSlowEchoSession, promptAnswer, type TestEditor } from "../testing/acp-editor.js";
import { type RefusingProxy, refusingProxy } from "../testing/refusing-proxy.js";
import { useTestDaemon } from "../testing/use-daemon.js";

vi.setConfig({ testTimeout: 120_000 });

const t = useTestDaemon();
const words = Array.from({ length: 100 }, (_, i) => `w${i}`).join(" ");
const opened: { editor: TestEditor; proxy: RefusingProxy }[] = [];
afterEach(async () => {
  for (const { editor, proxy } of opened.splice(0)) {
    editor.child.kill("SIGTERM");
    await editor.exited;
    proxy.close();
  }
});

it("refuses each request after a prompt gave up on a hung daemon at once, with the prompt's words, until it answers again", async () => {
  const proxy = await refusingProxy(t.url);
  const editor = await connectEditor(["--server", proxy.url, "--token", t.tokens.admin], {
    env: { BRAIN_ACP_DAEMON_WAIT: "2", BRAIN_SERVER_TIMEOUT: "2" },
  });
  opened.push({ editor, proxy });
  const sessionId = await newSlowEchoSession(editor);
  const answer = promptAnswer(editor, sessionId, words);
  const chunks = () => editor.updates.filter((n) => n.sessionId === sessionId).length;
  await expect.poll(chunks, { timeout: 60_000 }).toBeGreaterThan(2);
  proxy.hang();
  const lost = await answer;
  expect(lost).toMatchObject({ code: -32603, data: { reason: "unreachable", url: proxy.url } });
  const { since, message } = (lost as { data: Record<string, string> }).data;
  expect(message).toBe(
    `the daemon at ${proxy.url} has answered nothing since ${since} (it takes connections and does not answer, or they do not get through): is \`brain serve\` there hung (stopped, SIGSTOP)? Restart it (its sessions and their logs are kept), then send the request again`,
  );
  // The next prompt is refused in the same words, its own request never sent to wait: only the probe was.
  const heldBefore = proxy.held.filter((r) => !r.startsWith("GET /healthz")).length;
  expect(await promptAnswer(editor, sessionId, "again")).toEqual(lost);
  expect(proxy.held.filter((r) => !r.startsWith("GET /healthz")).length).toBe(heldBefore);
  expect(proxy.held.at(-1)).toBe("GET /healthz");
  // Awake again: the first request that gets through finds it, and runs (once the first turn, unseen, has settled).
  proxy.wake();
  const settled = async () =>
    (await t.client().log(sessionId, 0, 1000)).events.filter((e) => e.type === "turn.settled").length;
  await expect.poll(settled, { timeout: 60_000 }).toBe(1);
  expect(await promptAnswer(editor, sessionId, "back")).toEqual({ answered: "end_turn" });
});
