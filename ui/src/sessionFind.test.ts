// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import type { SessionSearch } from "./bindings/app/SessionSearch";
import { answered, closed, closedFind, currentHit, markMatches, opened, splitMatches, step, typed, unmark } from "./sessionFind";
import recorded from "./fixtures/long-session.json";
import { isFindKey } from "./hooks/useFind";

const quokka = recorded.quokka as unknown as SessionSearch;
const stage1 = recorded.stage1 as unknown as SessionSearch;

describe("search within a session", () => {
  it("takes the answer to the query typed, not a late one to an older query", () => {
    let s = typed(opened(closedFind), "quokka");
    expect(s.searching).toBe(true);
    expect(answered(s, stage1)).toBe(s);
    s = answered(s, quokka);
    expect([s.searching, s.current, s.result?.matches, s.result?.skippedLines]).toEqual([false, 0, 1, 1]);
    expect(currentHit(s)?.turn).toBe(7);
    // Typing on: the old hit is no longer shown while the new search runs.
    expect(currentHit(typed(s, "quokkas"))).toBeNull();
  });

  it("steps through the hits with Enter and Shift+Enter, around the ends", () => {
    let s = answered(typed(opened(closedFind), "stage 1"), stage1);
    const n = stage1.hits.length;
    expect(n).toBeGreaterThan(2);
    expect(s.current).toBe(0);
    s = step(s, true);
    expect(s.current).toBe(n - 1);
    s = step(s, false);
    expect(s.current).toBe(0);
    s = step(step(s, false), false);
    expect(currentHit(s)).toBe(stage1.hits[2]);
    // Closed: no highlight, the query kept for the next Ctrl+F.
    s = closed(s);
    expect(currentHit(s)).toBeNull();
    expect(opened(s).query).toBe("stage 1");
  });

  it("marks matches case-insensitively in text and in rendered markdown, and unmarks them", () => {
    expect(splitMatches("The Quokka and the quokka", "QUOKKA")).toEqual([
      { text: "The ", match: false },
      { text: "Quokka", match: true },
      { text: " and the ", match: false },
      { text: "quokka", match: true },
    ]);
    expect(splitMatches("nothing", "  ")).toEqual([{ text: "nothing", match: false }]);
    const root = document.createElement("div");
    root.innerHTML = "<p>The <strong>Quokka</strong> case, quokka again</p><button>quokka</button>";
    expect(markMatches(root, "quokka")).toBe(2);
    expect([...root.querySelectorAll("mark")].map((m) => m.textContent)).toEqual(["Quokka", "quokka"]);
    unmark(root);
    expect(root.innerHTML).toBe("<p>The <strong>Quokka</strong> case, quokka again</p><button>quokka</button>");
  });
});

describe("Ctrl+F", () => {
  it("opens the search anywhere in the chat but not in the terminal, whose shell has it", () => {
    const composer = document.createElement("textarea");
    const panel = document.createElement("section");
    panel.className = "terminal-panel";
    const xterm = document.createElement("textarea");
    panel.append(xterm);
    document.body.append(composer, panel);
    const key = (target: EventTarget, over: Partial<KeyboardEvent> = {}) =>
      isFindKey({ key: "f", ctrlKey: true, metaKey: false, altKey: false, shiftKey: false, target, ...over });
    expect(key(composer)).toBe(true);
    expect(key(document.body, { key: "F" })).toBe(true);
    expect(key(xterm)).toBe(false);
    expect(key(composer, { shiftKey: true })).toBe(false);
    expect(key(composer, { ctrlKey: false })).toBe(false);
  });
});
