// What a finished tool card already shows of the tool's result.

/** The engine's result previews hold at most this many characters (crates/engine/src/exec.rs). */
export const ENGINE_PREVIEW_CHARS = 300;

/**
 * Whether the card already holds the tool's whole result: nothing was streamed and the
 * engine's preview was not cut (a cut preview is 300 characters and an ellipsis). Then
 * "Show full output" would show the same text again, so the card does not offer it.
 */
export function previewIsWhole(streamed: string, preview: string | null): boolean {
  if (streamed !== "" || preview === null) return false;
  return !preview.endsWith("…") && [...preview].length <= ENGINE_PREVIEW_CHARS;
}
