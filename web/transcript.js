// @ts-check
// Renders a session's events as a transcript: prompts, streamed replies, tool calls with their arguments and
// results (collapsed), permission requests and questions with buttons to answer, images, usage and cost, and
// how each turn ended. Built from the events alone, so a reload rebuilds exactly the same page.

/** @typedef {import("../src/protocol/events.js").SessionEvent} SessionEvent */
/** @typedef {SessionEvent["type"]} EventType */

import { answeredBy, el, fullArguments, plain, short, sumUsage, UNFINISHED_CONTROL } from "./parts.js";
import { requestCard } from "./request-card.js";

export class Transcript {
  /**
   * @param answer (requestId, body) => Promise, called by the request cards' buttons.
   * @param {{ client?: string, limit?: number, showAll?: () => void }} [options] `client`: this tab's
   * X-Brain-Client (an answer it gave is "by you"); `limit`: how many entries the transcript keeps, the newest
   * (none: all); `showAll`: opens the session again from its first event, offered when older ones are not shown.
   */
  constructor(container, answer, options = {}) {
    const { client = "", limit = undefined, showAll = () => {} } = options;
    this.container = container;
    this.answer = answer;
    this.client = client;
    this.limit = limit;
    this.showAll = showAll;
    /** The seq of the event that made each entry, for the note that says which ones are no longer shown. */
    this.seqOf = new WeakMap();
    /** The seq of the last event the transcript no longer shows (skipped or trimmed), 0 when it shows them all. */
    this.hidden = 0;
    this.seq = 0;
    this.replies = new Map();
    this.tools = new Map();
    this.requests = new Map();
    this.turn = undefined;
    /** Whether to scroll to the bottom at the next frame (./add), or undefined when no event came since the last. */
    this.stick = undefined;
    /** Streamed text not yet in the page, by the element it goes to: written once a frame, as one text node. */
    this.unwritten = new Map();
    /** The turn whose deltas came since the last assistant.message, or undefined when none did. */
    this.streamedIn = undefined;
  }

  clear() {
    this.container.replaceChildren();
    this.unwritten.clear();
    this.replies.clear();
    this.tools.clear();
    this.requests.clear();
    this.turn = undefined;
    this.streamedIn = undefined;
    this.hidden = 0;
  }

  /** Whether a turn is running, from the events seen so far. */
  get running() {
    return this.turn !== undefined;
  }

  /**
   * Shows one more event, keeping the view at the bottom if it was there. The scroll position is read once per
   * frame, not per event: reading it lays the page out, and a replay of thousands of events in one go laid the
   * growing transcript out once per event (minutes of a frozen tab for a turn of a few thousand deltas).
   * @param {SessionEvent} event
   */
  add(event) {
    if (this.stick === undefined) {
      const { scrollTop, clientHeight, scrollHeight } = this.container;
      this.stick = scrollTop + clientHeight >= scrollHeight - 40;
      requestAnimationFrame(() => {
        for (const [node, text] of this.unwritten) node.append(text);
        this.unwritten.clear();
        if (this.stick) this.container.scrollTop = this.container.scrollHeight;
        this.stick = undefined;
      });
    }
    this.seq = event.seq;
    this.render(event);
  }

  /**
   * One event of the log, typed from Brain's protocol (each case reads its own event's data).
   * @param {SessionEvent} event
   */
  render(event) {
    /** @type {any} */
    const d = event.data ?? {};
    switch (event.type) {
      case "session.opened":
        return this.note(
          `session opened on ${d.harness}${d.forked_from ? ` (forked from ${d.forked_from.session})` : ""}`,
        );
      case "session.closed":
        return this.note("session closed");
      case "user.prompt":
        return this.push(
          el(
            "div",
            { class: "msg user", "data-seq": String(event.seq) },
            d.text,
            ...(d.images ?? []).map((image) =>
              image.data
                ? el("img", {
                    class: "image",
                    src: `data:${image.mime_type ?? "image/png"};base64,${image.data}`,
                    alt: "image sent",
                  })
                : el("div", { class: "muted" }, `[image ${image.path}]`),
            ),
          ),
        );
      case "user.steer":
        return this.push(el("div", { class: "msg steer" }, `steer: ${d.text}`));
      case "user.interrupt":
        return this.note("interrupt requested");
      case "turn.started":
        this.turn = event.turn;
        return;
      case "assistant.delta":
        this.streamedIn = event.turn;
        this.write(this.reply(event.turn), d.text);
        return;
      case "assistant.message": {
        // Each message whose deltas did not come is shown whole, not only a turn's first: a compacted log keeps a
        // turn's every message (one per step of a tool loop) and none of its deltas (src/core/message-text.ts).
        const whole = this.streamedIn !== event.turn && d.text ? d.text : "";
        this.streamedIn = undefined;
        const reply = this.reply(event.turn, whole !== "");
        this.write(reply, whole);
        if (d.usage) {
          // Each message carries what was spent since the one before it (one per step, steer or model message):
          // the turn spent their sum, not what its last message says.
          reply.usage = sumUsage(reply.usage, d.usage);
          const usage = reply.usage;
          const parts = [`${usage.input} in`, `${usage.output} out`];
          if (usage.cache_read) parts.push(`${usage.cache_read} cached`);
          if (usage.cost !== undefined) parts.push(`$${usage.cost.toFixed(4)}`);
          reply.meta.textContent = `${parts.join(" · ")}${d.stop_reason ? ` · ${d.stop_reason}` : ""}`;
        }
        return;
      }
      case "tool.call": {
        const result = el("pre", { class: "tool-result muted" }, "running…");
        const details = el(
          "details",
          { class: "tool", "data-tool": d.id },
          el("summary", {}, `tool ${d.name}`),
          el("div", { class: "label" }, "arguments"),
          el("pre", {}, short(d.arguments)),
          el("div", { class: "label" }, "result"),
          result,
        );
        this.tools.set(d.id, { details, result });
        return this.push(details);
      }
      case "tool.result": {
        const tool = this.tools.get(d.id);
        const text = (d.content ?? []).map((c) => c.text).join("");
        if (!tool) return this.note(`tool result ${d.id}: ${short(text)}`);
        tool.result.textContent = short(text);
        tool.result.className = `tool-result${d.is_error ? " error" : ""}`;
        tool.details.querySelector("summary").append(d.is_error ? " — failed" : " — done");
        return;
      }
      case "permission.requested":
        return this.request(event, `Allow tool ${d.tool}?`, d.arguments && fullArguments(d.arguments), [
          ["Allow", { decision: "allow" }],
          ["Deny", { decision: "deny" }],
        ]);
      case "question.requested": {
        // nui's title, message and header are shown as sent, and each option with its description.
        const title = d.title ?? d.question;
        const shown = new Set([title]);
        const extra = [];
        if (d.message && !shown.has(d.message)) {
          shown.add(d.message);
          extra.push(el("div", { class: "q-message" }, d.message));
        }
        if (d.header) extra.push(el("div", { class: "label q-header" }, d.header));
        if (!shown.has(d.question)) extra.push(el("div", { class: "q-question" }, d.question));
        const descriptions = d.option_descriptions ?? {};
        return this.request(
          event,
          title,
          undefined,
          // Own keys only: an option named "constructor" or "__proto__" has no inherited description.
          (d.options ?? []).map((option) => [
            option,
            { answer: option },
            Object.hasOwn(descriptions, option) ? descriptions[option] : undefined,
          ]),
          true,
          extra,
        );
      }
      case "permission.resolved":
        return this.resolved(
          d.id,
          `${d.decision === "allow" ? "allowed" : "denied"}${d.reason ? `: ${d.reason}` : ""}${answeredBy(d.answered_by, this.client)}`,
        );
      case "question.answered":
        return this.resolved(
          d.id,
          `${d.answer ? `answered: ${d.answer}` : `${d.declined ? "declined" : "no answer"}${d.reason ? ` (${d.reason})` : ""}`}${answeredBy(d.answered_by, this.client)}`,
        );
      case "image":
        return this.push(
          el("img", {
            class: "image",
            src: `data:${d.mime_type};base64,${d.data}`,
            alt: "image from the agent",
          }),
        );
      case "turn.settled": {
        if (event.turn === this.turn) this.turn = undefined;
        const reply = this.replies.get(event.turn);
        reply?.box.classList.remove("streaming");
        if (d.status === "completed") return;
        const why = d.error ? `: ${d.error.code}: ${d.error.message}` : "";
        return this.push(
          el(
            "div",
            { class: `note ${d.status === "failed" ? "error" : ""}`, "data-settled": d.status },
            `turn ${d.status}${why}`,
          ),
        );
      }
      case "checkpoint.created":
        return this.note(`checkpoint ${d.id} (${d.files.length} file${d.files.length === 1 ? "" : "s"})`);
      case "harness.warning":
        return this.push(el("div", { class: "note warning" }, `warning: ${d.message}`));
      default:
        return this.note(event.type);
    }
  }

  /**
   * The box the turn's text goes into. `adding`: text is about to be added. Text that comes after something else
   * was shown (a tool call, a request, an image, a steer) goes below it, in a box of its own, so the transcript
   * reads in the order things happened; the turn's usage moves down with it.
   */
  reply(turn, adding = true) {
    const last = this.replies.get(turn);
    if (last && !(adding && last.said && last.box !== this.container.lastElementChild)) return last;
    const text = el("div", { class: "text" });
    const meta = el("div", { class: "meta muted" }, last?.meta.textContent ?? "");
    const box = el("div", { class: "msg assistant streaming", "data-turn": turn }, text, meta);
    if (last) {
      last.box.classList.remove("streaming");
      last.meta.textContent = "";
    }
    const reply = { box, text, meta, usage: last?.usage, said: false };
    this.replies.set(turn, reply);
    this.push(box);
    return reply;
  }

  /**
   * Adds to a reply's text at the next frame. A turn of a million deltas as a million text nodes, each added with
   * the text before it read back to see if there was any, made a replay's cost grow with the square of the turn.
   */
  write(reply, text) {
    // Terminal control goes (parts.js plain); a sequence cut between two deltas waits for the rest of it.
    const held = (reply.held ?? "") + (text ?? "");
    const unfinished = held.match(UNFINISHED_CONTROL)?.[0] ?? "";
    reply.held = unfinished;
    const shown = plain(held.slice(0, held.length - unfinished.length));
    if (!shown) return;
    reply.said = true;
    this.unwritten.set(reply.text, (this.unwritten.get(reply.text) ?? "") + shown);
  }

  /** `asked`: the nodes that show what a permission request would run, above the buttons. */
  request(event, title, asked, choices, freeText = false, extra = []) {
    const id = event.data.id;
    const request = requestCard({
      id,
      title,
      asked,
      choices,
      freeText,
      extra,
      answer: (body) => this.answer(id, body),
    });
    this.requests.set(id, request);
    this.push(request.card);
  }

  resolved(id, text) {
    const request = this.requests.get(id);
    if (!request) return this.note(text);
    request.card.classList.add("answered");
    request.buttons.remove();
    request.status.textContent = plain(text);
  }

  /** Retention removed the events after `after` and before `firstSeq` before they could be shown. */
  dropped(after, firstSeq) {
    const range = firstSeq - 1 === after + 1 ? `event ${after + 1}` : `events ${after + 1}–${firstSeq - 1}`;
    this.push(
      el(
        "div",
        { class: "note warning", "data-dropped": `${after}:${firstSeq}` },
        `${range} of this session are no longer kept (retention archived or dropped them); the transcript goes on from event ${firstSeq}`,
      ),
    );
  }

  /** The transcript starts after event `after` of a long log; `showAll` opens it again from its first. */
  skipped(after, showAll = this.showAll) {
    this.hidden = after;
    this.showAll = showAll;
    const range = after === 1 ? "event 1 is" : `events 1–${after} are`;
    this.container.querySelector(":scope > [data-skipped]")?.remove();
    this.container.prepend(
      el(
        "div",
        { class: "note", "data-skipped": String(after) },
        `${range} not shown: this long session's transcript starts near its end. `,
        el("button", { type: "button", class: "show-all", onclick: showAll }, "Show all"),
      ),
    );
  }

  /**
   * Keeps the newest `limit` entries: a tab left open on a busy session grew by every event it was sent, without
   * end. The note at the top names what went, with Show all; a request still waiting for its answer stays.
   */
  trim() {
    // The entry at the top of the view stays where it is, in a browser without CSS scroll anchoring too (Safari):
    // what goes is above it, and the view would jump by all of it.
    const view = this.container.getBoundingClientRect().top;
    const anchor = [...this.container.children].find((node) => node.getBoundingClientRect().bottom > view);
    const anchoredAt = anchor?.getBoundingClientRect().top;
    let count = this.container.childElementCount;
    let gone = this.hidden;
    for (let node = this.container.firstElementChild; node && count > this.limit; ) {
      const next = node.nextElementSibling;
      if (!node.matches("[data-skipped], .request:not(.answered)")) {
        gone = Math.max(gone, this.seqOf.get(node) ?? 0);
        node.remove();
        count--;
      }
      node = next;
    }
    // Later events for what went (a tool's result, a request's answer, more text) are shown as new entries.
    for (const [turn, reply] of this.replies) if (!reply.box.isConnected) this.replies.delete(turn);
    for (const [id, tool] of this.tools) if (!tool.details.isConnected) this.tools.delete(id);
    for (const [id, request] of this.requests) if (!request.card.isConnected) this.requests.delete(id);
    for (const node of this.unwritten.keys()) if (!node.isConnected) this.unwritten.delete(node);
    if (gone > 0) this.skipped(gone);
    if (anchor?.isConnected) this.container.scrollTop += anchor.getBoundingClientRect().top - anchoredAt;
  }

  note(text) {
    this.push(el("div", { class: "note" }, text));
  }

  push(node) {
    this.seqOf.set(node, this.seq);
    this.container.append(node);
    // A tenth over the limit before trimming, so its walk over the maps is paid once per many entries.
    if (this.limit && this.container.childElementCount > this.limit * 1.1) this.trim();
  }
}
