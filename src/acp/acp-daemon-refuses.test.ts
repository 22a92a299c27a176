// `brain acp --server URL` whose daemon is up but answers the prompt's event stream with an error (through a proxy
// in front of a real daemon: a real one cannot be made to answer 503 for as long as a test needs). That is not an
// unreachable daemon: a 5xx is tried again for $BRAIN_ACP_DAEMON_WAIT and then told with the daemon's own status and
// words, and the next request is not refused as unreachable; a 404 (the session gone) ends the prompt at once.
import { afterEach, expect, it, vi } from "vitest";
import { connectEditor, newSlowEchoSession, promptAnswer, type TestEditor } from "../testing/acp-editor.js";
import { type RefusingProxy, refusingProxy } from "../testing/refusing-proxy.js";
import { useTestDaemon } from "../testing/use-daemon.js";

vi.setConfig({ testTimeout: 120_000 });

const t = useTestDaemon();
const words = Array.from({ length: 200 }, (_, i) => `w${i}`).join(" ");
const opened: { editor: TestEditor; proxy: RefusingProxy }[] = [];
afterEach(async () => {
  for (const { editor, proxy } of opened.splice(0)) {
    editor.child.kill("SIGTERM");
    await editor.exited;
    proxy.close();
  }
});

async function editorThroughProxy() {
  const proxy = await refusingProxy(t.url);
  const editor = await connectEditor(["--server", proxy.url, "--token", t.tokens.admin], {
    env: { BRAIN_ACP_DAEMON_WAIT: "2" },
  });
  opened.push({ editor, proxy });
  return { proxy, editor };
}

const chunks = (editor: TestEditor, sessionId: string) =>
  editor.updates.filter((n) => n.sessionId === sessionId && n.update.sessionUpdate === "agent_message_chunk")
    .length;

it("ends a prompt whose daemon answers its event stream with 503 past the wait with the daemon's status and words, not as unreachable", async () => {
  const { proxy, editor } = await editorThroughProxy();
  const sessionId = await newSlowEchoSession(editor);
  const answer = promptAnswer(editor, sessionId, words);
  await expect.poll(() => chunks(editor, sessionId), { timeout: 60_000 }).toBeGreaterThan(2);
  proxy.refuseStreams(503, { code: "unavailable", message: "the daemon is starting: try again in a moment" });
  const refused = await answer;
  expect(refused).toMatchObject({
    code: -32603,
    data: { reason: "daemon_error", url: proxy.url, status: 503, code: "unavailable" },
  });
  // Tried again within the wait, as a daemon starting up would want.
  expect(proxy.refused()).toBeGreaterThan(1);
  const { since, message } = (refused as { data: Record<string, string> }).data;
  expect(message).toBe(
    `the daemon at ${proxy.url} answers the turn's event stream with 503 since ${since}: the daemon is starting: try again in a moment. The turn was interrupted if the daemon took the interrupt; see \`brain attach ${sessionId}\` or its log (\`brain serve\` prints why), then send the request again`,
  );
  // The daemon answers: the turn it would have run on unseen is interrupted.
  const settled = async () =>
    (await t.client().log(sessionId, 0, 1000)).events.flatMap((e) =>
      e.type === "turn.settled" ? [e.data.status] : [],
    );
  await expect.poll(settled, { timeout: 60_000 }).toEqual(["interrupted"]);
  // Nor is the next request refused as unreachable: it is sent, and runs once the stream is served again.
  proxy.passStreams();
  expect(await promptAnswer(editor, sessionId, "next")).toEqual({ answered: "end_turn" });
});

it("ends a prompt at once when the daemon answers its event stream with 404, saying the session is gone", async () => {
  const { proxy, editor } = await editorThroughProxy();
  const sessionId = await newSlowEchoSession(editor);
  const answer = promptAnswer(editor, sessionId, words);
  await expect.poll(() => chunks(editor, sessionId), { timeout: 60_000 }).toBeGreaterThan(2);
  proxy.refuseStreams(404, { code: "not_found", message: `no session "${sessionId}"` });
  expect(await answer).toEqual({ code: -32002, data: { message: `no session "${sessionId}"` } });
  // Not tried again: the first refusal is the answer.
  expect(proxy.refused()).toBe(1);
});
