import { describe, expect, it } from "vitest";
import { readSse } from "./sse.js";

/** A body that delivers `chunks` as they are: the splits are where a network may put them. */
function body(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

async function datas(chunks: string[], dataLineEndsJsonEvent: boolean): Promise<string[]> {
  const out: string[] = [];
  for await (const message of readSse(body(chunks), { dataLineEndsJsonEvent })) out.push(message.data);
  return out;
}

describe("readSse", () => {
  it("joins the data lines of one event and drops an event the stream does not end (the standard)", async () => {
    expect(await datas(['data: {"a":\ndata: 1}\n\n', 'data: {"b":2}\n'], false)).toEqual(['{"a":\n1}']);
  });

  it("tells of an event the body ended inside, and not of trailing comments or a whole JSON line", async () => {
    const cutOff = async (chunks: string[]) => {
      let cut: string | undefined;
      for await (const _ of readSse(body(chunks), {
        dataLineEndsJsonEvent: true,
        onCutOff: (h) => (cut = h),
      }));
      return cut;
    };
    expect(await cutOff(['data: {"a":1}\n\n', 'data: {"b":'])).toBe('data: {"b":');
    expect(await cutOff(["data: one\n", "data: two\n"])).toBe("data: one");
    expect(await cutOff(['data: {"a":1}\n', ": ping\n", ": pi"])).toBeUndefined();
    expect(await cutOff(['data: {"a":1}'])).toBeUndefined();
  });

  it("takes an event up to maxEventChars, its lines together, and ends the stream with an error past it", async () => {
    const big = "x".repeat(100);
    const read = async (chunks: string[]) => {
      const out: string[] = [];
      for await (const m of readSse(body(chunks), { maxEventChars: 220 })) out.push(m.data);
      return out;
    };
    // Two lines of 106 characters each: 212, under the limit; each event counts on its own.
    const ok = [`data: ${big}\ndata: ${big}\n\n`, `data: ${big}\n\n`];
    expect(await read(ok)).toEqual([`${big}\n${big}`, big]);
    // A third line makes 318; a line without its end counts as it comes, chunk by chunk.
    await expect(read([`data: ${big}\ndata: ${big}\ndata: ${big}\n\n`])).rejects.toThrow(
      /an event of more than 220 characters/,
    );
    await expect(read([...`data: ${big}${big}${big}`])).rejects.toThrow(/more than 220 characters/);
  });

  describe("with dataLineEndsJsonEvent (nui's line-by-line agents)", () => {
    it("ends an event at each data line that is a whole JSON object, blank line or not", async () => {
      const stream = 'data: {"n":1}\ndata: {"n":2}\r\ndata:{"n":3}\rdata: {"n":4}\n\ndata: {"n":5}';
      const want = ['{"n":1}', '{"n":2}', '{"n":3}', '{"n":4}', '{"n":5}'];
      expect(await datas([stream], true)).toEqual(want);
      // Split at every character: a CRLF across two chunks is one line end, a line across chunks one line.
      expect(await datas([...stream], true)).toEqual(want);
    });

    it("still joins an event whose object spans several data lines, and keeps ids and names", async () => {
      const chunks = [
        'event: message\nid: 7\ndata: {"a":\ndata: 1}\n\n',
        "data: not json\n\n",
        ": comment\n",
      ];
      const seen: { data: string; id?: string | undefined; event?: string | undefined }[] = [];
      for await (const m of readSse(body(chunks), { dataLineEndsJsonEvent: true })) {
        seen.push({ data: m.data, id: m.id, event: m.event });
      }
      expect(seen).toEqual([
        { data: '{"a":\n1}', id: "7", event: "message" },
        { data: "not json", id: undefined, event: undefined },
      ]);
    });

    it("does not end an event at a data line that only looks like an object", async () => {
      expect(await datas(['data: {"a": "}\ndata: {"}\n\n'], true)).toEqual(['{"a": "}\n{"}']);
    });
  });
});
