// The redactor's pre-check (form-filter.ts): it may let text through unsearched only when it holds no form, so it
// must say "may hold" wherever a form lies, whatever the forms' lengths, characters and place; and it passes prose.
import { describe, expect, it } from "vitest";
import { mulberry32 } from "../testing/rng.js";
import { FormFilter } from "./form-filter.js";
import { Redactor } from "./redact.js";
import { encodedForms } from "./secret-forms.js";

const CHARS = ["a", "Z", "0", "/", "+", "=", "-", "_", "%", "~", " ", "é", "🔑", '"', "\\"];

describe("FormFilter", () => {
  it("says a text may hold a form wherever the form lies in it, on random forms and texts", () => {
    const next = mulberry32(7);
    const pick = <T>(items: T[]) => items[Math.floor(next() * items.length)]!;
    const word = (min: number, max: number) => {
      let out = "";
      const length = min + Math.floor(next() * (max - min + 1));
      while (out.length < length) out += pick(CHARS);
      return out;
    };
    for (let round = 0; round < 3000; round++) {
      const forms = Array.from({ length: 1 + Math.floor(next() * 6) }, () => word(8, 40));
      const filter = FormFilter.NONE.with(forms);
      const text = `${word(0, 60)}${pick(forms)}${word(0, 60)}`;
      expect(filter.mayHold(text), JSON.stringify({ round, forms, text })).toBe(true);
    }
  });

  it("passes prose and code past a key's forms with no search, and knows no form when there are none", () => {
    const key = "sk-ant-api03-Zq9xW2kPLm0Qr7Ts4Vb8Nc1Hd6Jf3Gy5";
    const filter = FormFilter.NONE.with([key, ...encodedForms(key).map((form) => form.text)]);
    const prose = "The quick brown fox jumps over the lazy dog, and then some more prose follows here. ";
    const code = "const value = await fetchThing(config.baseUrl, { retries: 3, timeoutMs: 2500 });";
    expect(filter.mayHold(prose.repeat(3))).toBe(false);
    expect(filter.mayHold(code)).toBe(false);
    expect(filter.mayHold(`${prose}${key}`)).toBe(true);
    expect(FormFilter.NONE.mayHold(key)).toBe(false);
    // And the redactor, which asks it first, still finds the key and each of its forms.
    const redactor = new Redactor([{ name: "K", value: key }]);
    for (const form of [key, ...encodedForms(key).map((f) => f.text)]) {
      expect(redactor.redact(`${prose}${form}${code}`)).toBe(`${prose}[redacted:K]${code}`);
    }
  });
});
