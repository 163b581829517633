import { useT, type MessageKey } from "../i18n";
import { Overlay } from "./Overlay";

/** Where a shortcut works: everywhere, only with a workspace open, or only without one. */
type Where = "any" | "workspace" | "welcome";

const SHORTCUTS: [string, MessageKey, Where][] = [
  ["Enter", "help.send", "workspace"],
  ["Shift+Enter", "help.newline", "workspace"],
  ["Esc", "help.stop", "workspace"],
  ["Ctrl+L", "help.focus", "workspace"],
  ["Ctrl+N", "help.newChat", "workspace"],
  ["Ctrl+K", "board.search", "workspace"],
  ["Ctrl+F", "help.find", "workspace"],
  ["Home / End", "help.firstTurn", "workspace"],
  ["Ctrl+Shift+N", "header.newWindow", "any"],
  ["Ctrl+`", "terminal.toggle", "workspace"],
  ["Ctrl+O", "help.open", "welcome"],
  ["Ctrl+,", "help.settings", "any"],
  ["Ctrl+U", "help.usage", "any"],
  ["Ctrl+/", "help.help", "any"],
];

/** The shortcuts that work where the user is (with a workspace open or on the welcome screen). */
export function shortcutsFor(inWorkspace: boolean): [string, MessageKey][] {
  return SHORTCUTS.filter(([, , where]) => where === "any" || (where === "workspace") === inWorkspace).map(([keys, label]) => [keys, label]);
}

/** The keyboard shortcuts that work here. */
export function Help({ onClose, inWorkspace }: { onClose: () => void; inWorkspace: boolean }) {
  const t = useT();
  return (
    <Overlay title={t("help.title")} onClose={onClose} testId="help">
      <dl className="shortcuts">
        {shortcutsFor(inWorkspace).map(([keys, label]) => (
          <div key={keys} className="shortcut">
            <dt>
              {keys.split("+").map((k, i) => (
                <kbd key={i}>{k}</kbd>
              ))}
            </dt>
            <dd>{t(label)}</dd>
          </div>
        ))}
      </dl>
    </Overlay>
  );
}
