// Which daemon the CLI talks to: --server, else $BRAIN_URL, else the loopback port; and how long it waits for it.
import { type AddressInfo, createServer, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { ClientError } from "../../../client/client.js";
import { UsageError } from "../../args.js";
import { answerTimeout, connect, serverUrl } from "./connect.js";

describe("serverUrl", () => {
  it("takes --server, then $BRAIN_URL, then 127.0.0.1 on $BRAIN_PORT or 7777", () => {
    expect(serverUrl("http://h:1", { BRAIN_URL: "http://e:2" })).toBe("http://h:1");
    expect(serverUrl(undefined, { BRAIN_URL: "http://e:2" })).toBe("http://e:2");
    expect(serverUrl(undefined, { BRAIN_PORT: "7000" })).toBe("http://127.0.0.1:7000");
    expect(serverUrl(undefined, {})).toBe("http://127.0.0.1:7777");
  });

  it("takes an empty $BRAIN_URL as unset, as an empty $BRAIN_TOKEN or $BRAIN_PORT is", () => {
    expect(serverUrl(undefined, { BRAIN_URL: "", BRAIN_PORT: "" })).toBe("http://127.0.0.1:7777");
    expect(() => serverUrl(undefined, { BRAIN_URL: "ftp://x" })).toThrow(UsageError);
  });
});

it("refuses a URL with a user or password, not naming the password (fetch refused it, quoting it whole)", () => {
  for (const given of ["http://u:pw-secret-123@127.0.0.1:7932", "https://pw-secret-123@h:1/"]) {
    for (const [flag, env] of [
      [given, {}],
      [undefined, { BRAIN_URL: given }],
    ] as const) {
      const refused = (() => {
        try {
          serverUrl(flag, env);
        } catch (err) {
          return err;
        }
      })();
      expect(refused).toBeInstanceOf(UsageError);
      expect((refused as Error).message).toMatch(
        /without a user or password \(https?:\/\/[^@)]*\): give the token with --token/,
      );
      expect((refused as Error).message).not.toContain("pw-secret-123");
    }
  }
});

it("refuses a URL with a query or fragment, not naming the token it may hold (the web UI's link has it)", () => {
  // `brain serve` prints the web UI's link, http://HOST:PORT/#token=…: given as --server, "cannot reach the daemon
  // at <URL>" quoted it whole, token and all. So did the refusal of a URL that does not parse.
  for (const given of [
    "http://127.0.0.1:7932/#token=brain_tok-secret-123",
    "http://127.0.0.1:7932/?access_token=brain_tok-secret-123",
    "http://127.0.0.1:99999/#token=brain_tok-secret-123",
    "http://u:tok-secret-123@127.0.0.1:99999/",
  ]) {
    const refused = (() => {
      try {
        serverUrl(given, {});
      } catch (err) {
        return err;
      }
    })();
    expect(refused, given).toBeInstanceOf(UsageError);
    expect((refused as Error).message, given).toMatch(
      /--token or \$BRAIN_TOKEN|like http:\/\/127\.0\.0\.1:7777/,
    );
    expect((refused as Error).message, given).not.toContain("secret-123");
  }
});

describe("a daemon that takes the connection and never answers", () => {
  it("is an error naming its address and $BRAIN_SERVER_TIMEOUT once that many seconds pass", async () => {
    const held: Socket[] = [];
    const server = createServer((socket) => held.push(socket));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const client = connect({ server: url }, { BRAIN_TOKEN: "t", BRAIN_SERVER_TIMEOUT: "1" });
      const refused = await client.sessions().catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(ClientError);
      expect((refused as ClientError).code).toBe("timeout");
      expect((refused as ClientError).message).toContain(`the daemon at ${url} took the connection`);
      expect((refused as ClientError).message).toContain("GET /v1/sessions in 1 s");
      expect((refused as ClientError).message).toContain("$BRAIN_SERVER_TIMEOUT");
    } finally {
      for (const socket of held) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("takes $BRAIN_SERVER_TIMEOUT as whole seconds, 60 when unset, and refuses anything else naming it", () => {
    expect(answerTimeout({})).toBe(60_000);
    expect(answerTimeout({ BRAIN_SERVER_TIMEOUT: "5" })).toBe(5000);
    expect(answerTimeout({ BRAIN_SERVER_TIMEOUT: "0" })).toBe(0);
    expect(() => answerTimeout({ BRAIN_SERVER_TIMEOUT: "5s" })).toThrow(/\$BRAIN_SERVER_TIMEOUT .* not "5s"/);
  });
});
