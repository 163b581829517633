// UI strings in English and Simplified Chinese (`locales/`; the other prompt languages show English). `en` is the reference: `zh` must
// have every key (the type checks it), so a missing translation fails `npm run typecheck`.
import { createContext, useContext } from "react";
import type { Language } from "./bindings/app/Language";
import { en, type MessageKey } from "./locales/en";
import { zh } from "./locales/zh";
import { formatCount } from "./format";

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

/** A message with a singular and a plural form: keys `BASE.one` and `BASE.other`, each with `{n}`. */
export type PluralKey = {
  [K in MessageKey]: K extends `${infer B}.one` ? (`${B}.other` extends MessageKey ? B : never) : never;
}[MessageKey];

/**
 * "1 turn", "3 turns": the one way every count in the UI is worded. Picks the form of `n`
 * (English: one for exactly 1; languages without plurals give both keys the same text)
 * and puts the number in with the locale's digit grouping.
 */
export function plural(t: Translate, n: number, key: PluralKey): string {
  const form = (n === 1 ? `${key}.one` : `${key}.other`) as MessageKey;
  return t(form).replace("{n}", formatCount(n));
}

/** The translator of the app's current language. */
export const I18nContext = createContext<Translate>(translator("en"));

/** The current translator. */
export function useT(): Translate {
  return useContext(I18nContext);
}
