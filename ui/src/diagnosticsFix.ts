import type { Fix } from "./bindings/app/Fix";
import type { MessageKey, Translate } from "./i18n";

/** What the app says to do about a check: the typed fix in the app's words (never a Cairn command). */
export interface FixWords {
  /** The sentence. */
  text: string;
  /** Operating-system steps shown as written, if any. */
  steps: string[];
}

/** Words the typed `fix` of a diagnostics row; the row's `action` (the CLI's words) is never shown. */
export function fixWords(t: Translate, fix: Fix): FixWords {
  const key = `diag.fix.${fix.kind}` as MessageKey;
  let text = t(key);
  if ("provider" in fix) text = text.replace("{provider}", fix.provider);
  if ("server" in fix) text = text.replace("{server}", fix.server);
  return { text, steps: fix.kind === "system_steps" ? fix.steps : [] };
}
