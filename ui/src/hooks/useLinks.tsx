// Links in answers: a workspace file shows in the files panel (its folders opened, the file
// marked), a web page opens in the browser only after a confirmation that shows its address.
import { useCallback, useState, type ReactNode } from "react";
import * as ipc from "../ipc";
import { LinkConfirm } from "../components/LinkConfirm";
import type { LinkOpener } from "../components/Markdown";

/** The opener the chat's markdown uses, the file to reveal, and the confirmation dialog. */
export function useLinks(showFiles: () => void, fail: (e: unknown) => void): { openLink: LinkOpener; reveal: { path: string; at: number } | null; dialog: ReactNode } {
  const [reveal, setReveal] = useState<{ path: string; at: number } | null>(null);
  const [confirmUrl, setConfirmUrl] = useState<string | null>(null);
  const openLink: LinkOpener = useCallback(
    (target) => {
      if (target.kind === "web") setConfirmUrl(target.url);
      else if (target.kind === "file") {
        showFiles();
        setReveal({ path: target.path, at: Date.now() });
      }
    },
    [showFiles],
  );
  const dialog =
    confirmUrl === null ? null : (
      <LinkConfirm
        url={confirmUrl}
        onCancel={() => setConfirmUrl(null)}
        onOpen={() => {
          setConfirmUrl(null);
          ipc.openLink(confirmUrl).catch(fail);
        }}
      />
    );
  return { openLink, reveal, dialog };
}
