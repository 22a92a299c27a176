// Which daemon the CLI talks to and with which token: --server / $BRAIN_URL / http://127.0.0.1:$BRAIN_PORT|7777,
// and --token / $BRAIN_TOKEN / the admin token in $BRAIN_HOME/tokens.json. That file holds this machine's admin
// token, so it is sent only to a loopback URL, and only when no other user's process listens on its port
// (./listener-owner.ts): a daemon elsewhere takes its own token, given explicitly.

import { existsSync } from "node:fs";
import { userInfo } from "node:os";
import { BrainClient, tokenProblem } from "../../../client/client.js";
import { readTokens, tokensPath } from "../../../server/auth/tokens.js";
import { DEFAULT_PORT } from "../../../server/defaults.js";
import { isLoopback } from "../../../server/loopback.js";
import { UsageError } from "../../args.js";
import { brainHome } from "../../setup.js";
import { foreignListener } from "./listener-owner.js";

export function serverUrl(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  // An empty variable is an unset one, as for $BRAIN_TOKEN and $BRAIN_PORT (an `export BRAIN_URL=` left behind).
  const url = flag ?? (env.BRAIN_URL || `http://127.0.0.1:${env.BRAIN_PORT || DEFAULT_PORT}`);
  let parsed: URL;
  try {
    parsed = new URL(url);
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new Error("not http");
  } catch {
    throw new UsageError(
      `--server takes the daemon's URL, like http://127.0.0.1:7777, not "${shownUrl(url)}"`,
    );
  }
  // fetch refuses such a URL, and its error quoted the URL whole: the password ended up on the terminal.
  if (parsed.username || parsed.password) {
    parsed.username = "";
    parsed.password = "";
    throw new UsageError(
      `--server (or $BRAIN_URL) takes the daemon's URL without a user or password (${parsed.origin}): give the token with --token or $BRAIN_TOKEN`,
    );
  }
  // The web UI's link (http://HOST:PORT/#token=…, as `brain serve` prints it) or an ?access_token= URL: the
  // client would send its requests to the page's path, and its errors quoted the URL, token and all.
  if (parsed.search || parsed.hash) {
    throw new UsageError(
      `--server (or $BRAIN_URL) takes the daemon's URL without a query or fragment (${parsed.origin}): give the token with --token or $BRAIN_TOKEN`,
    );
  }
  return url;
}

/** A URL that did not parse, as a refusal quotes it: without what may hold a token or password. */
function shownUrl(url: string): string {
  return url.replace(/[?#].*$/s, "").replace(/\/\/[^/]*@/, "//***@");
}

export function serverToken(
  flag: string | undefined,
  url: string,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  if (flag) return flag;
  if (env.BRAIN_TOKEN) return env.BRAIN_TOKEN;
  const file = tokensPath(brainHome(env));
  if (!isLoopback(new URL(url).hostname)) {
    throw new UsageError(
      `the daemon at ${url} needs its token: give it with --token or $BRAIN_TOKEN (the admin token in ${file} ` +
        "is sent only to a loopback address: 127.0.0.0/8, ::1, localhost)",
    );
  }
  if (!existsSync(file)) return undefined;
  const foreign = foreignListener(new URL(url));
  if (foreign) throw new UsageError(foreign);
  return readTokens(file).tokens[0]?.token;
}

/**
 * The CLI's client id for the controller lease: one per user, so `brain run --server` after `brain run
 * --server` (or an attach) of the same person drives the same session without a "controlled by" refusal.
 */
export function cliClientId(): string {
  let user = "user";
  try {
    user = userInfo().username;
  } catch {}
  return `cli-${user.replace(/[^A-Za-z0-9_.-]/g, "_").slice(0, 64) || "user"}`;
}

/** $BRAIN_SERVER_TIMEOUT: seconds to wait for the daemon's answer to begin (default 60; 0: Node's own 300 s). */
export function answerTimeout(env: NodeJS.ProcessEnv = process.env): number {
  const given = env.BRAIN_SERVER_TIMEOUT;
  if (!given) return DEFAULT_ANSWER_SECONDS * 1000;
  if (!/^[0-9]{1,7}$/.test(given)) {
    throw new UsageError(
      `$BRAIN_SERVER_TIMEOUT is the seconds to wait for the daemon's answer (a whole number; 0 leaves Node's own 300 s), not "${given}"`,
    );
  }
  return Number(given) * 1000;
}

/** Long enough for a slow checkpoint's answer, short enough that a hung daemon is told within a minute. */
const DEFAULT_ANSWER_SECONDS = 60;

export function connect(
  values: { server?: string; token?: string },
  env: NodeJS.ProcessEnv = process.env,
): BrainClient {
  const url = serverUrl(values.server, env);
  const token = serverToken(values.token, url, env);
  const fromFile = !values.token && !env.BRAIN_TOKEN;
  const problem = token === undefined ? undefined : tokenProblem(token);
  if (problem) {
    const from = values.token ? "--token" : fromFile ? tokensPath(brainHome(env)) : "$BRAIN_TOKEN";
    throw new UsageError(`the token from ${from} cannot be sent: ${problem}`);
  }
  // Checked again before every request, not only now: `brain attach` and `brain acp --server` live on across a
  // daemon's restart, and while it is down another user may bind its port and take their next request.
  const guard = () => foreignListener(new URL(url));
  return new BrainClient({
    url,
    answerTimeoutMs: answerTimeout(env),
    ...(token ? { token } : {}),
    client: cliClientId(),
    ...(token && fromFile ? { guard, tokenFile: tokensPath(brainHome(env)) } : {}),
  });
}
