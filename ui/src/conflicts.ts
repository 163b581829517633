// How the app words a path a restore kept: by whose change it is (a typed fact from the
// checkpoint store), never the store's own text, which names CLI flags.
import type { ConflictView } from "./bindings/app/ConflictView";
import type { MessageKey } from "./i18n";

/** Why a restore keeps a path, in the app's words (the store's mention CLI flags). */
export function conflictText(c: ConflictView, t: (key: MessageKey) => string): string {
  switch (c.kind) {
    case "outside":
      return t("conflict.outside");
    case "uncertain":
      return t("conflict.uncertain");
    case "other_session":
      return t("conflict.otherSession");
    case "other":
      return c.reason;
  }
}

