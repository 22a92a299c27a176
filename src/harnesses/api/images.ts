// Images sent with a prompt: base64 data or a file path, read at prompt time and stored in the conversation as
// base64, so a restored checkpoint needs no file from the machine the prompt was typed on.
import { readFile } from "node:fs/promises";
import { bareBase64, imageTypeOf } from "../../core/image-bytes.js";
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

/** The types imageTypeOf knows: bytes of none of them are not an image of one of these types, whatever the label says. */
const SNIFFED = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

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
    bytes = Buffer.from(bareBase64(image.data).base64, "base64");
    if (bytes.length === 0) throw new ImageError(`${label}: data is empty or not base64`);
  } else {
    throw new ImageError(`${label} has neither data nor path`);
  }
  // Recognised from the first bytes, so a mislabelled file still goes out with the right type.
  const sniffed = imageTypeOf(bytes);
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
