// @ts-check
// The card of a permission request or a question: its title, what it would run, a button per choice and, for a
// question, a text answer with Decline. Answering disables the card until the daemon says how it went.

import { el } from "./parts.js";

/**
 * @param {{ id: string, title: string, asked?: Node[], choices: Array<[string, unknown, string?]>, freeText?: boolean,
 *   extra?: Node[], answer: (body: unknown) => Promise<unknown> }} request
 * @returns {{ card: HTMLElement, status: HTMLElement, buttons: HTMLElement }}
 */
export function requestCard({ id, title, asked, choices, freeText = false, extra = [], answer }) {
  const status = el("div", { class: "request-status muted" });
  const buttons = el("div", { class: "buttons" });
  const send = async (/** @type {unknown} */ body) => {
    for (const b of card.querySelectorAll("button, input")) b.disabled = true;
    try {
      await answer(body);
    } catch (err) {
      // Answered by another client meanwhile: the card says that answer, which this refusal must not replace.
      if (card.classList.contains("answered")) return;
      status.textContent = /** @type {Error} */ (err).message;
      for (const b of card.querySelectorAll("button, input")) b.disabled = false;
    }
  };
  for (const [label, body, description] of choices) {
    const about = description ? el("span", { class: "option-description" }, description) : undefined;
    buttons.append(
      el("button", { type: "button", title: description ?? "", onclick: () => send(body) }, label, about),
    );
  }
  if (freeText) {
    // Nothing typed is not sent: the question would be settled with no answer, for good, by a stray Enter. A
    // refusal to answer is said with its own button, and logged as declined, not as no one answering.
    const typed = () => {
      if (input.value.trim()) send({ answer: input.value });
      else status.textContent = "Type an answer first, or Decline.";
    };
    // Enter sends what was typed, as in a form: from the keyboard alone, else, it takes a Tab to the button.
    const input = el("input", {
      placeholder: "your answer",
      class: "answer",
      onkeydown: (/** @type {KeyboardEvent} */ e) => {
        if (e.key === "Enter" && !e.isComposing && !input.disabled) typed();
      },
    });
    const decline = () => send({ answer: "", declined: true });
    buttons.append(
      input,
      el("button", { type: "button", onclick: typed }, "Answer"),
      el("button", { type: "button", onclick: decline }, "Decline"),
    );
  }
  const card = el(
    "div",
    { class: "request", "data-request": id },
    el("div", { class: "title" }, title),
    ...extra,
    ...(asked ?? []),
    buttons,
    status,
  );
  return { card, status, buttons };
}
