// The check that a CLI agent never holds the provider's real key: the model has the agent print its environment
// with its own shell tool, and the key is in none of what the agent could reach or Brain wrote (the tool's
// output, the session's files, its log), while the provider still received it, in the vendor's own header, from
// Brain's credential proxy. The proxy then refuses a wrong token, another session's, and the session's own once it
// closed; in a container, another session's proxy is not even reachable. It refused nothing the CLI asked for.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import type { Session } from "../core/session.js";
import { PROXY_VARIABLE } from "../harnesses/cli/proxy-variable.js";
import { events } from "./brain.js";
import { agentRequests, type CliBed, FAKE_KEY } from "./cli.js";

/** Every regular file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return filesUnder(path);
    return entry.isFile() ? [path] : [];
  });
}

/** A status, or the error's code when the request found no server (a closed proxy). */
async function statusOf(url: string): Promise<number | string> {
  try {
    const res = await fetch(url, {
      method: "POST",
      body: "{}",
      headers: { "content-type": "application/json" },
    });
    await res.arrayBuffer();
    return res.status;
  } catch (err) {
    return ((err as Error & { cause?: { code?: string } }).cause?.code ?? (err as Error).message) as string;
  }
}

type CreateOptions = Parameters<CliBed["create"]>[0];

/**
 * For an agent that shows its client no shell output (gemini's ACP mode): the command that prints the
 * environment somewhere, and how to read that.
 */
export interface PrintedElsewhere {
  command: string;
  read(b: CliBed, session: Session): string;
}

/** How a check makes its sessions: `options` (a dev container's innerHarness), `printed` (see PrintedElsewhere). */
export interface CheckSessions {
  options?: CreateOptions;
  printed?: PrintedElsewhere;
}

/** A new session's agent prints its environment: the key is not in it, and its proxy's origin and token are. */
async function printedProxy(b: CliBed, { options, printed }: CheckSessions = {}) {
  const session = await b.create(options);
  const turn = await session.prompt(`Show me your environment CMD[${printed?.command ?? "env"}]`);
  expect((await turn.settled).status).toBe("completed");
  const results = (await events(session)).filter((e) => e.type === "tool.result" && e.turn === turn.turn);
  const output = JSON.stringify(results) + (printed?.read(b, session) ?? "");
  // The command did run, and printed the environment: the key is not in it, the proxy's URL is. Brain's log
  // redacts a key it knows, so a key the agent printed shows here as its redaction, not as itself.
  expect(output).not.toContain(FAKE_KEY);
  expect(output, "the agent's shell printed the provider's key").not.toContain("[redacted:provider_key]");
  const proxy = new RegExp(`${PROXY_VARIABLE}=(http://127\\.0\\.0\\.1:\\d+)/([A-Za-z0-9_-]+)`).exec(output);
  expect(proxy, `no ${PROXY_VARIABLE} in the printed environment: ${output.slice(0, 2000)}`).not.toBeNull();
  return { session, origin: proxy![1]!, token: proxy![2]! };
}

/** `keyHeader`: the header the provider must receive the real key in, and its value. */
export async function checkKeyNotInAgent(
  b: CliBed,
  keyHeader: [string, string],
  path: string,
  sessions?: CheckSessions,
): Promise<void> {
  const { session, origin, token } = await printedProxy(b, sessions);

  const requests = agentRequests(b.sandbox.provider.requests);
  expect(requests.length).toBeGreaterThan(0);
  for (const request of requests) expect(request.headers[keyHeader[0]]).toBe(keyHeader[1]);
  // Every path the real CLI called is one the proxy puts the key on (../harnesses/cli/proxy-paths.ts).
  const refused = (await events(session)).filter(
    (e) => e.type === "harness.warning" && JSON.stringify(e.data).includes("credential proxy refused"),
  );
  expect(refused).toEqual([]);

  expect(await statusOf(`${origin}/${token}x${path}`)).toBe(403);
  expect(await statusOf(`${origin}/not-the-token${path}`)).toBe(403);
  await session.close();
  expect(String(await statusOf(`${origin}/${token}${path}`))).toMatch(/^(403|ECONNREFUSED)$/);

  // Nothing Brain keeps of the session (native dir, log, state) holds the key.
  const dir = b.t.store.paths(session.id).dir;
  const holding = filesUnder(dir).filter(
    (file) => statSync(file).size < 64 * 1024 * 1024 && readFileSync(file).includes(FAKE_KEY),
  );
  expect(holding).toEqual([]);
}

/** What `node -e` in the agent's shell got for a POST to `url`: `STATUS <n>`, or `UNREACHABLE <code>`. */
async function statusInside(session: Session, url: string): Promise<string> {
  const script = `fetch('${url}',{method:'POST',body:'{}'}).then(r=>console.log('STATUS',r.status),e=>console.log('UNREACHABLE',e.cause&&e.cause.code))`;
  const turn = await session.prompt(`Try it CMD[node -e "${script}"]`);
  expect((await turn.settled).status).toBe("completed");
  const results = (await events(session)).filter((e) => e.type === "tool.result" && e.turn === turn.turn);
  const said = /(STATUS \d+|UNREACHABLE \w+)/.exec(JSON.stringify(results));
  expect(said, `no status printed: ${JSON.stringify(results).slice(0, 2000)}`).not.toBeNull();
  return said![1]!;
}

/**
 * Two sessions' agents, each holding its own token: neither's proxy takes the other's token, from this host or
 * from inside the agent's own shell, and the other session's proxy is not even reachable from there.
 */
export async function checkTokensApart(b: CliBed, path: string, sessions?: CheckSessions): Promise<void> {
  const one = await printedProxy(b, sessions);
  const two = await printedProxy(b, sessions);
  expect(one.origin).not.toBe(two.origin);
  expect(await statusOf(`${one.origin}/${two.token}${path}`)).toBe(403);
  expect(await statusOf(`${two.origin}/${one.token}${path}`)).toBe(403);
  expect(await statusInside(one.session, `${one.origin}/${two.token}${path}`)).toBe("STATUS 403");
  expect(await statusInside(one.session, `${two.origin}/${two.token}${path}`)).toMatch(/^UNREACHABLE/);
}

/**
 * In a --network none container whose agent reaches its provider through the proxy: the provider's own loopback
 * port is not bridged in (the agent could go past the proxy), and the proxy, which is, answers the agent's shell.
 */
export async function checkProviderOnlyThroughProxy(
  b: CliBed,
  path: string,
  sessions?: CheckSessions,
): Promise<void> {
  const { session, origin, token } = await printedProxy(b, sessions);
  expect(await statusInside(session, `${b.sandbox.provider.url}${path}`)).toMatch(/^UNREACHABLE/);
  expect(await statusInside(session, `${origin}/${token}${path}`)).toMatch(/^STATUS /);
  expect(agentRequests(b.sandbox.provider.requests).length).toBeGreaterThan(0);
}
