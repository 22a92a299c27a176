// One test daemon for a whole test file: started before its tests, cleaned up after them. What it returns stands
// for the daemon (t.url, t.client(), t.tokens, ...) once the file's tests run.
import { afterAll, beforeAll } from "vitest";
import { startTestDaemon, type TestDaemon } from "./daemon.js";

export function useTestDaemon(options: Parameters<typeof startTestDaemon>[0] = {}): TestDaemon {
  let daemon: TestDaemon | undefined;
  beforeAll(async () => {
    daemon = await startTestDaemon(options);
  });
  afterAll(() => daemon?.cleanup());
  return new Proxy({} as TestDaemon, {
    get(_, key) {
      if (!daemon) throw new Error("useTestDaemon: the daemon starts in beforeAll; use it inside a test");
      const value = Reflect.get(daemon, key);
      return typeof value === "function" ? value.bind(daemon) : value;
    },
  });
}
