// Locale formatting with one Intl object per locale and style. JavaScriptCore builds a new
// ICU formatter for every `toLocaleString` call and each `new Intl.*`: a long transcript made
// thousands of them while it scrolled (two per assistant row), and the web process kept the
// memory they took.

const formatters = new Map<string, Intl.NumberFormat | Intl.RelativeTimeFormat | Intl.DateTimeFormat>();

function cached<T extends Intl.NumberFormat | Intl.RelativeTimeFormat | Intl.DateTimeFormat>(key: string, make: () => T): T {
  const hit = formatters.get(key);
  if (hit !== undefined) return hit as T;
  const made = make();
  formatters.set(key, made);
  return made;
}

/** A count with the locale's digit grouping ("12,345"); `locale` undefined is the system's. */
export function formatCount(n: number, locale?: string): string {
  return cached(`n|${locale ?? ""}`, () => new Intl.NumberFormat(locale)).format(n);
}

/** The relative-time formatter ("3 minutes ago", "yesterday") of `lang`. */
export function relativeTimeFormat(lang: string): Intl.RelativeTimeFormat {
  return cached(`r|${lang}`, () => new Intl.RelativeTimeFormat(lang, { numeric: "auto" }));
}

/** A date, or a date and time ("Dec 2, 2026, 3:04 PM"), in `locale` (undefined: the system's). */
export function formatDate(date: Date, locale?: string, withTime = false): string {
  const key = `d|${locale ?? ""}|${withTime ? "t" : ""}`;
  const options: Intl.DateTimeFormatOptions = withTime ? { dateStyle: "medium", timeStyle: "short" } : {};
  return cached(key, () => new Intl.DateTimeFormat(locale, options)).format(date);
}
