// What a slash command done without a model turn says in the transcript: built from the
// backend's typed outcome (never from its text).
import type { CommandOutcome } from "./bindings/app/CommandOutcome";
import { plural, type MessageKey, type Translate } from "./i18n";

/** The notice for a command's outcome, and whether it reports a problem. */
export function describeOutcome(outcome: CommandOutcome, t: Translate): { text: string; tone: "info" | "error" } {
  const e = outcome.effect;
  switch (e.kind) {
    case "mode":
      return { text: t("command.mode").replace("{mode}", t(`mode.${e.mode}` as MessageKey)), tone: "info" };
    case "model":
      return { text: t("command.model").replace("{model}", e.model), tone: "info" };
    case "nothing_to_undo":
      return { text: t("command.nothingToUndo"), tone: "info" };
    case "undo_failed":
      return { text: t("command.undoFailed").replace("{reason}", e.reason), tone: "error" };
    case "undone": {
      const r = e.restore;
      const changed = r.restored.length + r.deleted.length;
      let text = plural(t, changed, "command.undone");
      if (r.conflicts.length > 0) {
        text += ` ${plural(t, r.conflicts.length, "command.undoKept")} ${r.conflicts.map((c) => c.path).join(", ")}`;
      }
      return { text, tone: r.conflicts.length > 0 ? "error" : "info" };
    }
  }
}
