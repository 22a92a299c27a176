// Images sent with a prompt: base64 data or a file path, read at prompt time and stored in the conversation as
// base64, so a restored checkpoint needs no file from the machine the prompt was typed on.
import { readFile } from "node:fs/promises";
import type { PromptImage } from "../../protocol/events.js";

export interface LoadedImage {
  /** Base64, no data: URL prefix. */
  data: string;
  mimeType: string;
}

/** Bad image input: the turn fails with this message. */
export class ImageError extends Error {
  override name = "ImageError";
}

/** The types `sniff` knows: bytes of none of them are not an image of one of these types, whatever the label says. */
const SNIFFED = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

/** Recognised from the first bytes, so a mislabelled file still goes out with the right type. */
function sniff(bytes: Buffer): string | undefined {
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])))
    return "image/png";
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return "image/jpeg";
  if (bytes.subarray(0, 4).toString("latin1") === "GIF8") return "image/gif";
  if (
    bytes.subarray(0, 4).toString("latin1") === "RIFF" &&
    bytes.subarray(8, 12).toString("latin1") === "WEBP"
  )
    return "image/webp";
  return undefined;
}

export async function loadImages(images: PromptImage[] | undefined): Promise<LoadedImage[]> {
  const out: LoadedImage[] = [];
  for (const [i, image] of (images ?? []).entries()) out.push(await loadImage(image, `image ${i + 1}`));
  return out;
}

async function loadImage(image: PromptImage, label: string): Promise<LoadedImage> {
  let bytes: Buffer;
  if (image.path !== undefined) {
    try {
      bytes = await readFile(image.path);
    } catch (err) {
      throw new ImageError(
        `${label} (${image.path}) cannot be read: ${(err as NodeJS.ErrnoException).code ?? err}`,
      );
    }
  } else if (image.data !== undefined) {
    const base64 = image.data.replace(/^data:[^;,]*;base64,/, "");
    bytes = Buffer.from(base64, "base64");
    if (bytes.length === 0) throw new ImageError(`${label}: data is empty or not base64`);
  } else {
    throw new ImageError(`${label} has neither data nor path`);
  }
  const sniffed = sniff(bytes);
  const claimed = image.mime_type;
  // The image is saved with the prompt and sent again with every later request: bytes a provider cannot take
  // would fail every turn of the session from then on, so what can be checked is checked here.
  if (!sniffed && claimed && SNIFFED.has(claimed)) {
    throw new ImageError(
      `${label} has mime_type ${claimed} but its bytes are not that kind of image (not a PNG, JPEG, GIF or WebP); send the image file's own bytes, base64`,
    );
  }
  if (!sniffed && claimed && !claimed.startsWith("image/")) {
    throw new ImageError(`${label} has mime_type ${claimed}, which is not an image type (image/...)`);
  }
  const mimeType = sniffed ?? claimed;
  if (!mimeType) {
    throw new ImageError(
      `${label} is not a PNG, JPEG, GIF or WebP image; give its mime_type if it is another kind`,
    );
  }
  return { data: bytes.toString("base64"), mimeType };
}
