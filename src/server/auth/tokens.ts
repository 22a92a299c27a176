// The daemon's tokens: $BRAIN_HOME/tokens.json (mode 0600), created at first start with one controller token of
// the "default" tenant. Add tenant or observer tokens with `brain token add`; the daemon reads the file at start.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { type TokenEntry, type TokenRole, TokensFile } from "../../protocol/api.js";
import type { AnsweredBy } from "../../protocol/events.js";
import { describeIssues } from "../../protocol/frames.js";
import { DEFAULT_TENANT } from "../../protocol/session.js";

export { DEFAULT_TENANT };

export class TokenFileError extends Error {
  override name = "TokenFileError";
}

export function tokensPath(home: string): string {
  return join(home, "tokens.json");
}

/**
 * A new bearer token: 32 random bytes, base64url, after a `brain_` prefix. Without it one token in 64 would start
 * with `-`, which a command line then takes for an option (`--token -x…` is refused as ambiguous).
 */
export function newToken(): string {
  return `brain_${randomBytes(32).toString("base64url")}`;
}

/** Reads the token file, creating it (with one admin token) when it does not exist yet. */
export function loadOrCreateTokens(home: string): { file: TokensFile; created: boolean } {
  const path = tokensPath(home);
  if (existsSync(path)) return { file: readTokens(path), created: false };
  const file: TokensFile = {
    tokens: [{ token: newToken(), tenant: DEFAULT_TENANT, role: "controller", name: "admin" }],
    secret: randomBytes(32).toString("base64url"),
  };
  writeTokens(path, file);
  return { file, created: true };
}

export function readTokens(path: string): TokensFile {
  refuseShared(path);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new TokenFileError(`${path}: cannot read the token file: ${(err as Error).message}`);
  }
  const parsed = TokensFile.safeParse(raw);
  if (!parsed.success) {
    throw new TokenFileError(
      `${path}: ${describeIssues(parsed.error)}; fix the file or delete it to get a fresh admin token`,
    );
  }
  refuseAmbiguous(path, parsed.data.tokens);
  return parsed.data;
}

/**
 * One token listed twice with another tenant, role or providers: a request carrying it would be let in as
 * whichever entry came last (another tenant's sessions), so the file is refused, naming the entries, not the token.
 */
function refuseAmbiguous(path: string, tokens: TokenEntry[]): void {
  const first = new Map<string, number>();
  const grant = (t: TokenEntry) => JSON.stringify([t.tenant, t.role, t.providers ?? null]);
  for (const [i, entry] of tokens.entries()) {
    const seen = first.get(entry.token);
    if (seen === undefined) {
      first.set(entry.token, i);
      continue;
    }
    const earlier = tokens[seen]!;
    if (grant(earlier) === grant(entry)) continue;
    const shown = (t: TokenEntry) =>
      `tenant "${t.tenant}", ${t.role}${t.providers ? `, providers ${t.providers.join(",")}` : ""}`;
    throw new TokenFileError(
      `${path}: tokens[${seen}] (${shown(earlier)}) and tokens[${i}] (${shown(entry)}) hold the same token, so a request with it cannot be told apart; delete one entry and give its holder a new token (\`brain token add\`)`,
    );
  }
}

/**
 * A token file other users may read gives them every tenant's token, and one they may write lets them add
 * their own: refused, as ssh refuses a shared private key. The mode checked is the file's own, through a
 * symlink. Windows has no such mode bits.
 */
function refuseShared(path: string): void {
  if (process.platform === "win32") return;
  let mode: number;
  try {
    mode = statSync(path).mode & 0o777;
  } catch {
    return; // reading it says why
  }
  if ((mode & 0o077) !== 0) {
    throw new TokenFileError(
      `${path}: mode 0${mode.toString(8)} lets other users read or change the daemon's tokens; run \`chmod 600 ${path}\``,
    );
  }
}

/** tmp + rename, mode 0600 from the start: the file never exists readable by others. */
export function writeTokens(path: string, file: TokensFile): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${randomBytes(6).toString("hex")}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}

/** Adds a token to the file and returns it. */
export function addToken(
  home: string,
  entry: { tenant: string; role: TokenRole; name?: string; providers?: string[] },
): TokenEntry {
  const path = tokensPath(home);
  const { file } = loadOrCreateTokens(home);
  const token: TokenEntry = { token: newToken(), ...entry };
  writeTokens(path, { ...file, tokens: [...file.tokens, token] });
  return token;
}

export interface Principal {
  tenant: string;
  role: TokenRole;
  /** The token's name in tokens.json, if it has one: what the log says answered a request (never the token). */
  name?: string;
  /** The configured providers this caller may use; undefined: all of them. */
  providers?: string[];
}

/** Who answers a request, as the log records it: the token's tenant and name (never the token), and its client. */
export function answeredBy({ tenant, name, client }: Principal & { client?: string }): AnsweredBy {
  return { tenant, ...(name ? { token: name } : {}), ...(client ? { client } : {}) };
}

/** Looks tokens up by their SHA-256, compared in constant time, so timing says nothing about a token. */
export class TokenTable {
  private readonly entries: { digest: Buffer; principal: Principal }[];

  constructor(tokens: TokenEntry[]) {
    this.entries = tokens.map((t) => ({
      digest: digest(t.token),
      principal: {
        tenant: t.tenant,
        role: t.role,
        ...(t.name ? { name: t.name } : {}),
        ...(t.providers ? { providers: t.providers } : {}),
      },
    }));
  }

  find(token: string): Principal | undefined {
    const d = digest(token);
    let found: Principal | undefined;
    for (const entry of this.entries) if (timingSafeEqual(entry.digest, d)) found = entry.principal;
    return found;
  }
}

function digest(token: string): Buffer {
  return createHash("sha256").update(token).digest();
}
