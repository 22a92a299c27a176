// What the credential proxy's test files share: one fake provider on 127.0.0.1 for the file, reset after each
// test, and the proxies a test starts, closed after it, all holding the same operator key.
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll } from "vitest";
import { type FakeProvider, startFakeProvider } from "../../../testing/fake-provider/index.js";
import { CredentialProxy, type ProxyWire } from "../credential-proxy.js";

export const KEY = "sk-real-operator-key";

export interface ProxyBed {
  /** The file's fake provider; set once the file's tests start. */
  readonly provider: FakeProvider;
  /** A proxy holding KEY for `base_url`, closed after the test; `refused` hears what it refuses. */
  proxy(wire: ProxyWire, base_url: string, refused?: (why: string) => void): Promise<CredentialProxy>;
}

/** Registers the file's hooks; call at the top of a test file. */
export function useProxyBed(): ProxyBed {
  let provider: FakeProvider | undefined;
  const proxies: CredentialProxy[] = [];
  beforeAll(async () => {
    provider = await startFakeProvider();
  });
  afterEach(async () => {
    provider?.reset();
    await Promise.all(proxies.splice(0).map((p) => p.close()));
  });
  afterAll(() => provider?.close());
  return {
    get provider() {
      if (!provider) throw new Error("the proxy bed's provider is used before its tests start");
      return provider;
    },
    async proxy(wire, base_url, refused) {
      const made = await CredentialProxy.start({ wire, api_key: KEY, base_url }, refused);
      proxies.push(made);
      return made;
    },
  };
}

/** A provider on 127.0.0.1 that answers every request with `answer`, for the duration of `run`. */
export async function withUpstream(
  answer: (res: ServerResponse, headers: IncomingHttpHeaders) => void,
  run: (url: string) => Promise<void>,
): Promise<void> {
  const upstream = createServer((req, res) => {
    req.resume();
    req.on("end", () => answer(res, req.headers));
  });
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  try {
    await run(`http://127.0.0.1:${(upstream.address() as AddressInfo).port}`);
  } finally {
    upstream.closeAllConnections();
    await new Promise((resolve) => upstream.close(resolve));
  }
}
