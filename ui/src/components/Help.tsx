import { useT, type MessageKey } from "../i18n";
import { Overlay } from "./Overlay";

const SHORTCUTS: [string, MessageKey][] = [
  ["Enter", "help.send"],
  ["Shift+Enter", "help.newline"],
  ["Esc", "help.stop"],
  ["Ctrl+L", "help.focus"],
  ["Ctrl+N", "help.newChat"],
  ["Ctrl+K", "board.search"],
  ["Ctrl+Shift+N", "header.newWindow"],
  ["Ctrl+`", "terminal.toggle"],
  ["Ctrl+O", "help.open"],
  ["Ctrl+,", "help.settings"],
  ["Ctrl+U", "help.usage"],
  ["Ctrl+/", "help.help"],
];

/** The keyboard shortcuts. */
export function Help({ onClose }: { onClose: () => void }) {
  const t = useT();
  return (
    <Overlay title={t("help.title")} onClose={onClose} testId="help">
      <dl className="shortcuts">
        {SHORTCUTS.map(([keys, label]) => (
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
