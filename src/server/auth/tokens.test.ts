import { chmodSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import type { TokenEntry } from "../../protocol/api.js";
import { loadOrCreateTokens, newToken, readTokens, tokensPath, writeTokens } from "./tokens.js";

describe("newToken", () => {
  it("makes tokens a command line takes as an option's value (never starting with '-')", () => {
    // base64url starts with '-' once in 64: 2,000 tokens would hold ~31 such without the prefix.
    const tokens = Array.from({ length: 2000 }, newToken);
    expect(new Set(tokens).size).toBe(tokens.length);
    for (const token of tokens) {
      expect(token).toMatch(/^brain_[A-Za-z0-9_-]{43}$/);
      const { values } = parseArgs({ args: ["--token", token], options: { token: { type: "string" } } });
      expect(values.token).toBe(token);
    }
  });
});

describe.skipIf(process.platform === "win32")("the token file's mode", () => {
  const homes: string[] = [];
  const home = () => {
    const dir = mkdtempSync(join(tmpdir(), "brain-tokens-"));
    homes.push(dir);
    return dir;
  };
  afterEach(() => {
    for (const dir of homes.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("refuses a tokens.json other users may read or write, naming the chmod that fixes it", () => {
    const dir = home();
    const { file } = loadOrCreateTokens(dir);
    const path = tokensPath(dir);
    for (const mode of [0o644, 0o640, 0o604, 0o620, 0o602]) {
      chmodSync(path, mode);
      expect(() => loadOrCreateTokens(dir)).toThrow(`mode 0${mode.toString(8)}`);
      expect(() => readTokens(path)).toThrow(`run \`chmod 600 ${path}\``);
    }
    chmodSync(path, 0o600);
    expect(loadOrCreateTokens(dir)).toEqual({ file, created: false });
    chmodSync(path, 0o400);
    expect(readTokens(path)).toEqual(file);
  });

  it("checks the file a symlinked tokens.json points to", () => {
    const dir = home();
    const target = join(home(), "tokens.json");
    writeTokens(target, {
      tokens: [{ token: newToken(), tenant: "default", role: "controller" }],
      secret: "s".repeat(43),
    });
    symlinkSync(target, tokensPath(dir));
    expect(loadOrCreateTokens(dir).created).toBe(false);
    chmodSync(target, 0o644);
    expect(() => loadOrCreateTokens(dir)).toThrow("chmod 600");
  });
});

describe("a token listed twice", () => {
  it("refuses one token given to two tenants or roles, naming the entries and never the token", () => {
    const dir = mkdtempSync(join(tmpdir(), "brain-tokens-"));
    try {
      const path = tokensPath(dir);
      const token = newToken();
      const twice = (second: TokenEntry) =>
        writeTokens(path, {
          tokens: [
            { token: newToken(), tenant: "default", role: "controller" },
            { token, tenant: "acme", role: "controller" },
            second,
          ],
          secret: "s".repeat(43),
        });
      twice({ token, tenant: "other", role: "controller" });
      expect(() => readTokens(path)).toThrow(
        /tokens\[1\] \(tenant "acme", controller\) and tokens\[2\] \(tenant "other", controller\)/,
      );
      expect(() => readTokens(path)).not.toThrow(token);
      twice({ token, tenant: "acme", role: "observer" });
      expect(() => readTokens(path)).toThrow("cannot be told apart");
      // The same grant twice is only a repeated line: whichever entry is found, the caller is the same.
      twice({ token, tenant: "acme", role: "controller", name: "again" });
      expect(readTokens(path).tokens).toHaveLength(3);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
