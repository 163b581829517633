// Every open session's transcript outside React: a store fed by the sessions' event channels
// (events of a running session keep folding into its own transcript, shown or not, once per
// animation frame) and by the page's own actions (notices, answers, steering chips).
import type { Event } from "./bindings/Event";
import type { SessionView } from "./bindings/app/SessionView";
import { Store } from "./store";
import {
  applyEvents,
  chatFrom,
  closeStaleTools,
  emptyChat,
  markAnswered,
  prependHistory,
  withNotice,
  withWaitingPrompt,
  WAITING_ID,
  type AskState,
  type ChatState,
} from "./transcript";

/** What changes one session's transcript. */
export type Action =
  | { type: "reset"; view: SessionView | null }
  | { type: "events"; events: Event[]; view: SessionView | null }
  | { type: "older"; events: Event[]; first: number }
  | { type: "answered"; id: string; state: AskState | "rejected" }
  | { type: "notice"; text: string; tone?: "info" | "error"; action?: "settings" }
  | { type: "steer"; text: string }
  | { type: "waiting"; text: string | null }
  | { type: "unsteer"; text: string };

/** Each open session's transcript, by session id ("" = no session yet). */
export type Chats = Record<string, ChatState>;

/** Events of running sessions keep folding into their own transcript, shown or not. */
export function reduceChats(chats: Chats, keyed: { id: string; action: Action }): Chats {
  return { ...chats, [keyed.id]: reduce(chats[keyed.id] ?? emptyChat, keyed.action) };
}

/** One transcript after an action. */
export function reduce(state: ChatState, action: Action): ChatState {
  switch (action.type) {
    case "reset": {
      if (action.view === null) return emptyChat;
      const logged = applyEvents(chatFrom(action.view.earlierUsage, action.view.historyBefore), action.view.events);
      // Without a running turn, calls still open in the log belong to a stopped process.
      const base = action.view.busy ? logged : closeStaleTools(logged);
      // A prompt still waiting for its turn stays shown.
      const waiting = state.items.find((i) => i.id === WAITING_ID);
      return {
        ...base,
        items: waiting !== undefined ? [...base.items, waiting] : base.items,
        running: action.view.busy,
        todos: action.view.todos,
        steering: action.view.pendingSteering.map((text) => ({ text, state: "queued" as const })),
      };
    }
    case "events":
      return applyEvents(state, action.events);
    case "older":
      return prependHistory(state, action.events, action.first);
    case "answered":
      return markAnswered(state, action.id, action.state);
    case "notice":
      return withNotice(state, action.text, action.tone, action.action);
    case "waiting":
      return withWaitingPrompt(state, action.text);
    case "steer":
      return { ...state, steering: [...state.steering, { text: action.text, state: "queued" }] };
    case "unsteer": {
      const i = state.steering.findIndex((s) => s.text === action.text && s.state === "queued");
      return i === -1 ? state : { ...state, steering: state.steering.filter((_, j) => j !== i) };
    }
  }
}

/** The transcripts and which sessions have a run (turn call) under way, shown or not. */
export type ChatsState = { chats: Chats; inFlight: Readonly<Record<string, true>> };

/** Runs `f` before the next paint; returns its cancel. */
export type Schedule = (f: () => void) => () => void;

const nextFrame: Schedule = (f) => {
  const id = requestAnimationFrame(f);
  return () => cancelAnimationFrame(id);
};

/** The sessions' transcripts, by session id ("" = no session yet). */
export class ChatStore extends Store<ChatsState> {
  private queue = new Map<string, Event[]>();
  private cancel: (() => void) | null = null;

  constructor(private readonly schedule: Schedule = nextFrame) {
    super({ chats: {}, inFlight: {} });
  }

  /** The transcript of session `id` (empty when it has none yet). */
  chat(id: string): ChatState {
    return this.get().chats[id] ?? emptyChat;
  }

  /** Whether session `id` runs: a turn under way in its events, or a run call in flight. */
  isLive(id: string): boolean {
    const s = this.get();
    return s.chats[id]?.running === true || s.inFlight[id] === true;
  }

  /** Applies an action to session `id`'s transcript. */
  dispatch(id: string, action: Action): void {
    const s = this.get();
    this.set({ ...s, chats: reduceChats(s.chats, { id, action }) });
  }

  /** Marks session `id`'s run call as under way or done. */
  setPending(id: string, on: boolean): void {
    const s = this.get();
    if ((s.inFlight[id] === true) === on) return;
    const inFlight = { ...s.inFlight };
    if (on) inFlight[id] = true;
    else delete inFlight[id];
    this.set({ ...s, inFlight });
  }

  /** The event handler of session `id`'s channel: events arrive in bursts and are folded
   * once per frame, each into its own session. */
  eventsOf(id: string): (event: Event) => void {
    return (event) => {
      const q = this.queue.get(id);
      if (q === undefined) this.queue.set(id, [event]);
      else q.push(event);
      if (this.cancel !== null) return;
      this.cancel = this.schedule(() => this.flush());
    };
  }

  /** Folds the queued events now. */
  flush(): void {
    this.cancel = null;
    const all = this.queue;
    this.queue = new Map();
    if (all.size === 0) return;
    let chats = this.get().chats;
    for (const [sid, events] of all) chats = reduceChats(chats, { id: sid, action: { type: "events", events, view: null } });
    this.set({ ...this.get(), chats });
  }

  /** Stops a scheduled fold (the page goes away). */
  dispose(): void {
    this.cancel?.();
    this.cancel = null;
  }
}
