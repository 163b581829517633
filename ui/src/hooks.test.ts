// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import type { SettingsView } from "./bindings/app/SettingsView";
import { preBlocked } from "./blocked";
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

describe("preBlocked", () => {
  const settings = (model: string, key: SettingsView["providers"][number]["key"], needsKey = true) =>
    ({ model, provider: "openai", providers: [{ id: "openai", label: "OpenAI", needsKey, key }] }) as unknown as SettingsView;

  it("says what stops a first turn, in words with the way out", () => {
    expect(preBlocked(settings("", { state: "stored", masked: "sk-…" }))).toContain("No model is chosen");
    expect(preBlocked(settings("gpt", { state: "missing" }))).toBe("No API key is set for OpenAI: add one in Settings (it is kept in the OS keyring).");
    expect(preBlocked(settings("gpt", { state: "unavailable", reason: "no D-Bus" }))).toContain("no D-Bus");
    expect(preBlocked(settings("gpt", { state: "stored", masked: "sk-…" }))).toBeNull();
    expect(preBlocked(settings("llama", { state: "missing" }, false))).toBeNull();
  });
});
