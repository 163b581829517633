// Typed wrappers around Cairn's Tauri commands. Every wire type comes from the generated
// bindings in ./bindings (see crates/protocol/tests/bindings.rs); never declare one by hand.
import { Channel, invoke } from "@tauri-apps/api/core";
import type { AppInfo } from "./bindings/app/AppInfo";
import type { Event } from "./bindings/Event";

/** The app's name, version and protocol version. */
export function appInfo(): Promise<AppInfo> {
  return invoke<AppInfo>("app_info");
}

/**
 * Asks the backend to stream one demo turn for `input`; every protocol event is handed to
 * `onEvent` in order. Resolves when the backend has sent the whole turn (the UI should still
 * treat `turn_end` as the end of a turn: it is always the last event).
 */
export async function pingEvents(input: string, onEvent: (event: Event) => void): Promise<void> {
  const channel = new Channel<Event>();
  channel.onmessage = onEvent;
  await invoke<void>("ping_events", { input, onEvent: channel });
}

/** A readable message for an IPC failure of unknown shape. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === "string") return error;
  try {
    return JSON.stringify(error);
  } catch {
    return String(error);
  }
}
