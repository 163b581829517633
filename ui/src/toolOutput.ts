// What a finished tool card already shows of the tool's result.

/** The engine's result previews hold at most this many characters (crates/engine/src/exec.rs). */
export const ENGINE_PREVIEW_CHARS = 300;

/**
 * Whether the card already holds the tool's whole result: nothing was streamed and the
 * engine says its preview was not cut (`truncated`). Then "Show full output" would show the
 * same text again, so the card does not offer it. Events logged before the engine said so
 * (`truncated` null) fall back to the preview's shape (a cut one is 300 characters and "…").
 */
export function previewIsWhole(streamed: string, preview: string | null, truncated: boolean | null = null): boolean {
  if (streamed !== "" || preview === null) return false;
  if (truncated !== null) return !truncated;
  return !preview.endsWith("…") && [...preview].length <= ENGINE_PREVIEW_CHARS;
}
