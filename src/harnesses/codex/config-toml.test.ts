// The strings Brain writes into Codex's config.toml are TOML basic strings: what the real Codex reads of them is
// checked on the CLI (codex.test.ts: a model name with DEL); here, that none of TOML's forbidden characters is
// left raw, and that what TOML cannot hold at all is refused by name.
import { expect, it } from "vitest";
import { codexConfigToml, tomlString } from "./config-toml.js";

// TOML 1.0 basic strings: no raw control character but tab, no raw quote or backslash, \u only for scalar values.
const RAW_FORBIDDEN = /[\x00-\x08\x0a-\x1f\x7f]/;

it("escapes every control character TOML refuses raw, DEL included, and leaves other text as it is", () => {
  const controls = Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join("");
  const written = tomlString(`${controls}\x7f "q" \\ é 😀 \u2028`, "x");
  expect(written).not.toMatch(RAW_FORBIDDEN);
  expect(written).toContain("\\u007f");
  expect(written.endsWith(' \\"q\\" \\\\ é 😀 \u2028"')).toBe(true);
  expect(codexConfigToml({ model: "fake\x7fmodel" }, {})).toContain('model = "fake\\u007fmodel"');
});

it("refuses a lone surrogate, naming the field, instead of writing a file Codex throws away", () => {
  expect(() => codexConfigToml({ model: "fake\ud800model" }, {})).toThrow(
    /the session's model \(config\.model\) holds a lone surrogate/,
  );
  expect(() => codexConfigToml({}, { base_url: "http://127.0.0.1/\udc00" })).toThrow(
    /the provider's base_url holds a lone surrogate/,
  );
});
