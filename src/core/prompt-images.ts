// A prompt's images are the caller's input: a malformed one, or any for a harness that takes none, is a bad request.
import { z } from "zod";
import { PromptImage } from "../protocol/events.js";
import { describeIssues } from "../protocol/frames.js";
import { SessionError } from "./errors.js";
import type { HarnessFactory } from "./harness.js";

/** The images to send with a prompt (none when it has none), checked for the harness that takes them. */
export function checkImages(
  images: PromptImage[] | undefined,
  factory: HarnessFactory,
  harnessName: string,
): PromptImage[] | undefined {
  if (!images || images.length === 0) return undefined;
  if (!factory.supportsImages)
    throw new SessionError(
      "bad_request",
      `harness "${harnessName}" does not take images: send the prompt without them, or to a session on a harness that takes them`,
      "images",
    );
  const parsed = z.array(PromptImage).safeParse(images);
  if (!parsed.success) throw new SessionError("bad_request", `bad image: ${describeIssues(parsed.error)}`);
  return parsed.data;
}
