// Which daemon the CLI talks to: --server, else $BRAIN_URL, else the loopback port.
import { describe, expect, it } from "vitest";
import { UsageError } from "../../args.js";
import { serverUrl } from "./connect.js";

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
