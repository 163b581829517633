import { useCallback, useEffect, useReducer, useState } from "react";
import type { AppInfo } from "./bindings/app/AppInfo";
import type { Event } from "./bindings/Event";
import { Composer } from "./components/Composer";
import { Header } from "./components/Header";
import { Sidebar } from "./components/Sidebar";
import { Transcript } from "./components/Transcript";
import { appInfo, describeError, pingEvents } from "./ipc";
import { applyEvent, emptyTranscript, withNotice, type Transcript as TranscriptState } from "./transcript";

type Action = { type: "event"; event: Event } | { type: "failed"; message: string };

function reduce(state: TranscriptState, action: Action): TranscriptState {
  switch (action.type) {
    case "event":
      return applyEvent(state, action.event);
    case "failed":
      return withNotice(state, action.message);
  }
}

/** The app shell: header, session sidebar, transcript and composer. */
export function App() {
  const [info, setInfo] = useState<AppInfo | null>(null);
  const [infoError, setInfoError] = useState<string | null>(null);
  const [transcript, dispatch] = useReducer(reduce, emptyTranscript);
  // Set between sending and the first event back, so a second Enter cannot start a second turn.
  const [pending, setPending] = useState(false);

  useEffect(() => {
    appInfo().then(setInfo, (error: unknown) => setInfoError(describeError(error)));
  }, []);

  const send = useCallback((text: string) => {
    setPending(true);
    pingEvents(text, (event) => {
      setPending(false);
      dispatch({ type: "event", event });
    }).catch((error: unknown) => {
      setPending(false);
      dispatch({ type: "failed", message: `Could not run the turn: ${describeError(error)}` });
    });
  }, []);

  return (
    <div className="app">
      <Header info={info} error={infoError} />
      <Sidebar />
      <main className="chat">
        <Transcript items={transcript.items} />
        <Composer busy={pending || transcript.running} onSend={send} />
      </main>
    </div>
  );
}
