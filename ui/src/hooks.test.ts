// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { isSearchKey } from "./hooks/useSessionSearch";

const press = (key: string, target: EventTarget | null, more: Partial<KeyboardEvent> = {}) => ({
  key,
  ctrlKey: false,
  metaKey: false,
  altKey: false,
  defaultPrevented: false,
  target,
  ...more,
});

describe("the board's search key", () => {
  it("is `/` outside text fields and dialogs", () => {
    const body = document.body;
    const button = document.createElement("button");
    const composer = document.createElement("textarea");
    const dialog = document.createElement("div");
    dialog.setAttribute("role", "dialog");
    const inDialog = document.createElement("span");
    dialog.appendChild(inDialog);
    document.body.append(button, composer, dialog);
    expect(isSearchKey(press("/", body))).toBe(true);
    expect(isSearchKey(press("/", button))).toBe(true);
    // In the composer `/` starts a slash command; in a dialog it is the dialog's.
    expect(isSearchKey(press("/", composer))).toBe(false);
    expect(isSearchKey(press("/", inDialog))).toBe(false);
    expect(isSearchKey(press("/", body, { ctrlKey: true }))).toBe(false);
    expect(isSearchKey(press("k", body))).toBe(false);
    expect(isSearchKey(press("/", body, { defaultPrevented: true }))).toBe(false);
  });
});
