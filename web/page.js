// @ts-check
// What every part of the web UI shares: the page's elements by id, its address's parameters, where errors are
// shown, and the state of the signed-in page (its API, the open session, the session list).

/**
 * The page's element with this id. The page's ids name inputs, buttons and forms, so the one type covers what
 * the code reads of them (value, disabled, files, requestSubmit).
 * @param {string} id
 * @returns {HTMLInputElement & HTMLFormElement}
 */
export const $ = (id) => /** @type {HTMLInputElement & HTMLFormElement} */ (document.getElementById(id));

/** How many sessions the list shows at first, and how many more each "Show more" adds. */
export const LIST_PAGE = 100;

export function hashParams() {
  return new URLSearchParams(location.hash.slice(1));
}

export function setHash(params) {
  const text = params.toString();
  history.replaceState(null, "", text ? `#${text}` : location.pathname);
}

export const state = {
  /** This tab's X-Brain-Client (login.js, clientId). */
  client: undefined,
  api: undefined,
  session: undefined,
  view: undefined,
  stream: undefined,
  transcript: undefined,
  sessions: [],
  /** How many of the newest sessions the list shows: one page until "Show more" asks for the next. */
  listSize: LIST_PAGE,
  /**
   * What was typed in the composer for each session left with text in it, by session id: shown again when it is
   * opened again. In memory only, never in the browser's storage: a draft may hold a secret.
   */
  drafts: new Map(),
  /** The images picked in the composer for each session left with some (its Files), by session id, as drafts. */
  images: new Map(),
  /** The session list's refresh loop now running (pollSessions). */
  poll: undefined,
  /** The refresh a turn event asked for, while it is on its way (refreshSoon). */
  refreshing: undefined,
  /** Whether another turn event came while it was: one more refresh follows it. */
  refreshAgain: false,
};

export function showError(id, err) {
  $(id).textContent = err ? (err.message ?? String(err)) : "";
}

/**
 * Says `text` through the page's live region (#announce), which a screen reader reads out: what a user must hear
 * (a turn started or ended, a request waiting), not every streamed piece. Emptied first, so the same words said
 * twice in a row are read twice.
 */
export function announce(text) {
  const region = $("announce");
  region.textContent = "";
  region.textContent = text;
}
