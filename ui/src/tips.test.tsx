// @vitest-environment jsdom
import { act } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { TIP_DELAY_MS, Tips } from "./components/Tips";

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

let root: Root;
let host: HTMLDivElement;
let button: HTMLButtonElement;
let other: HTMLDivElement;
/** What `document.elementFromPoint` answers (jsdom has no layout). */
let topmost: Element | null;

const fire = (el: Element, type: string) =>
  act(() => {
    el.dispatchEvent(new MouseEvent(type, { bubbles: true, clientX: 10, clientY: 10 }));
  });
const wait = (ms: number) =>
  act(() => {
    vi.advanceTimersByTime(ms);
  });
const tip = () => document.querySelector("[data-testid=tip]")?.textContent ?? null;

beforeEach(() => {
  vi.useFakeTimers();
  host = document.createElement("div");
  document.body.appendChild(host);
  button = document.createElement("button");
  button.dataset.tip = "Stop (Esc)";
  button.innerHTML = "<span>Stop</span>";
  other = document.createElement("div");
  document.body.append(button, other);
  topmost = button.firstElementChild;
  document.elementFromPoint = () => topmost;
  root = createRoot(host);
  act(() => root.render(<Tips />));
});

afterEach(() => {
  act(() => root.unmount());
  document.body.innerHTML = "";
  vi.useRealTimers();
});

describe("Tips (the page's hover hints)", () => {
  it("shows an element's hint after a rest, not at once", () => {
    fire(button.firstElementChild!, "pointerover");
    expect(tip()).toBeNull();
    wait(TIP_DELAY_MS);
    expect(tip()).toBe("Stop (Esc)");
  });

  it("hides on a click and stays hidden until the pointer enters the element again", () => {
    fire(button, "pointerover");
    wait(TIP_DELAY_MS);
    fire(button, "pointerdown");
    expect(tip()).toBeNull();
    // Moving within the element (onto its label) brings nothing back.
    fire(button.firstElementChild!, "pointerover");
    wait(TIP_DELAY_MS * 3);
    expect(tip()).toBeNull();
    fire(other, "pointerover");
    topmost = button;
    fire(button, "pointerover");
    wait(TIP_DELAY_MS);
    expect(tip()).toBe("Stop (Esc)");
  });

  it("hides on a key press", () => {
    fire(button, "pointerover");
    wait(TIP_DELAY_MS);
    act(() => {
      window.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape" }));
    });
    expect(tip()).toBeNull();
  });

  it("goes away with its element, though the pointer never moved", () => {
    fire(button, "pointerover");
    wait(TIP_DELAY_MS);
    expect(tip()).toBe("Stop (Esc)");
    act(() => button.remove());
    wait(50);
    expect(tip()).toBeNull();
  });

  it("goes away when something opens over its element, and never shows over it", () => {
    fire(button, "pointerover");
    wait(TIP_DELAY_MS);
    expect(tip()).toBe("Stop (Esc)");
    topmost = other;
    wait(50);
    expect(tip()).toBeNull();
    // Covered before the rest is over: no hint at all.
    fire(other, "pointerover");
    topmost = other;
    fire(button, "pointerover");
    wait(TIP_DELAY_MS);
    expect(tip()).toBeNull();
  });
});
