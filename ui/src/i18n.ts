// UI strings in English and Simplified Chinese (`locales/`; the other prompt languages show English). `en` is the reference: `zh` must
// have every key (the type checks it), so a missing translation fails `npm run typecheck`.
import { createContext, useContext } from "react";
import type { Language } from "./bindings/app/Language";
import { en, type MessageKey } from "./locales/en";
import { zh } from "./locales/zh";

export type { MessageKey } from "./locales/en";

// The prompts also speak Traditional Chinese, Japanese, Korean and Spanish; the interface
// shows English text for those.
const dictionaries: Record<Language, Record<MessageKey, string>> = { en, zh, "zh-TW": en, ja: en, ko: en, es: en };

/** Translates keys for one language. */
export type Translate = (key: MessageKey) => string;

/** A translator for `language`. */
export function translator(language: Language): Translate {
  const dict = dictionaries[language];
  return (key) => dict[key] ?? en[key];
}

/** The translator of the app's current language. */
export const I18nContext = createContext<Translate>(translator("en"));

/** The current translator. */
export function useT(): Translate {
  return useContext(I18nContext);
}
