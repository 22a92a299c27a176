// Images with a prompt are saved in the conversation and sent again with every later request: what a provider
// could never take is refused before it is saved.
import { describe, expect, it } from "vitest";
import { apiTestBed } from "./testing/bed.js";
import { transcript } from "./testing/provider.js";

const bed = apiTestBed();

describe("images a provider cannot take", () => {
  it("refuses bytes that are not the image their mime_type names, and the next turn goes on without them", async () => {
    const session = await bed
      .brain()
      .brain.create({ harness: "api", config: { model: "anthropic:fake-model" } });
    const notImage = Buffer.from("hello world").toString("base64");
    const refused = await (
      await session.prompt("look", { images: [{ data: notImage, mime_type: "image/png" }] })
    ).settled;
    expect(refused.error?.message).toBe(
      "image 1 has mime_type image/png but its bytes are not that kind of image (not a PNG, JPEG, GIF or WebP); send the image file's own bytes, base64",
    );
    expect(bed.fake.requests).toHaveLength(0);
    const pdf = await (
      await session.prompt("look", { images: [{ data: notImage, mime_type: "application/pdf" }] })
    ).settled;
    expect(pdf.error?.message).toBe(
      "image 1 has mime_type application/pdf, which is not an image type (image/...)",
    );
    expect((await (await session.prompt("and now?")).settled).status).toBe("completed");
    expect(transcript(bed.fake.requests[0]!.body)).toEqual(["user: and now?"]);
  });
});
