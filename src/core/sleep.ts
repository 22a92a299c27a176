// The one abortable wait: retries, provider back-off and the demo runner's pacing all stop waiting as soon as
// their signal aborts, and leave no timer or listener behind.

/** Resolves true after `ms`, or false as soon as `signal` aborts (at once when it already has). */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  if (ms <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
