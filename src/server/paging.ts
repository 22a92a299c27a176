// Pages of a list ordered by something stable (sessions: oldest first), with an id as the cursor.
import { ApiError } from "./errors.js";

export interface Page<T> {
  items: T[];
  /** The id of the page's last item, when items are left after it: the next page's `after`. */
  next?: string;
}

/**
 * `limit` items after the one whose id is `after` (from the start without it; all without `limit`). A cursor no
 * longer in the list is a 400 naming `after`: where its item was cannot be told any more.
 */
export function pageOf<T extends { id: string }>(
  all: readonly T[],
  { limit, after }: { limit?: number; after?: string },
  what: string,
): Page<T> {
  const start = after === undefined ? 0 : all.findIndex((item) => item.id === after) + 1;
  if (after !== undefined && start === 0) {
    throw new ApiError(
      "bad_request",
      `query parameter "after": no ${what} "${after}" to page after (deleted since, or not yours); list again without "after"`,
      "after",
    );
  }
  const end = limit === undefined ? all.length : Math.min(all.length, start + limit);
  const items = all.slice(start, end);
  return end < all.length && end > start ? { items, next: all[end - 1]!.id } : { items };
}
