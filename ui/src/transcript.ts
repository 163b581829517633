// The transcript model: protocol events folded into the items the chat view renders.
import type { Event } from "./bindings/Event";
import type { TokenUsage } from "./bindings/TokenUsage";
import type { TurnStatus } from "./bindings/TurnStatus";

/** One rendered block of the transcript. */
export type TranscriptItem =
  | { kind: "user"; id: string; text: string }
  | {
      kind: "assistant";
      id: string;
      text: string;
      reasoning: string;
      streaming: boolean;
      usage: TokenUsage | null;
    }
  | { kind: "notice"; id: string; tone: "info" | "error"; text: string }
  | { kind: "turn_end"; id: string; status: TurnStatus; iterations: number };

/** The transcript of one session plus whether a turn is running. */
export type Transcript = { items: TranscriptItem[]; running: boolean };

/** An empty transcript. */
export const emptyTranscript: Transcript = { items: [], running: false };

/** Wire names of the statuses, as a person reads them. */
export const turnStatusLabel: Record<TurnStatus, string> = {
  completed: "Turn completed",
  max_iterations_exceeded: "Stopped: too many iterations",
  interrupted: "Interrupted",
  error: "Ended with an error",
};

function updateAssistant(
  items: TranscriptItem[],
  id: string,
  update: (item: Extract<TranscriptItem, { kind: "assistant" }>) => TranscriptItem,
): TranscriptItem[] {
  const index = items.findIndex((item) => item.kind === "assistant" && item.id === id);
  if (index === -1) {
    const fresh: TranscriptItem = {
      kind: "assistant",
      id,
      text: "",
      reasoning: "",
      streaming: true,
      usage: null,
    };
    return [...items, update(fresh as Extract<TranscriptItem, { kind: "assistant" }>)];
  }
  const current = items[index];
  if (current === undefined || current.kind !== "assistant") return items;
  const next = items.slice();
  next[index] = update(current);
  return next;
}

/** Folds one protocol event into the transcript. Pure: returns a new value. */
export function applyEvent(state: Transcript, event: Event): Transcript {
  switch (event.type) {
    case "turn_start":
      return {
        running: true,
        items: [...state.items, { kind: "user", id: `${event.data.taskId}:user`, text: event.data.input }],
      };
    case "assistant_delta":
      return {
        ...state,
        items: updateAssistant(state.items, event.data.reqId, (item) => ({
          ...item,
          text: item.text + event.data.text,
        })),
      };
    case "reasoning_delta":
      return {
        ...state,
        items: updateAssistant(state.items, event.data.reqId, (item) => ({
          ...item,
          reasoning: item.reasoning + event.data.text,
        })),
      };
    case "assistant_message":
      return {
        ...state,
        items: updateAssistant(state.items, event.data.reqId, (item) => ({
          ...item,
          text: event.data.text,
          reasoning: event.data.reasoning,
          streaming: false,
          usage: event.data.usage ?? null,
        })),
      };
    case "error":
      return {
        ...state,
        items: [
          ...state.items,
          { kind: "notice", id: `${event.data.taskId}:error:${state.items.length}`, tone: "error", text: event.data.error },
        ],
      };
    case "llm_retry":
      return {
        ...state,
        items: [
          ...state.items,
          {
            kind: "notice",
            id: `retry:${event.data.reqId}:${event.data.attempt}`,
            tone: "info",
            text: `Retrying (${event.data.attempt}/${event.data.max}): ${event.data.reason}`,
          },
        ],
      };
    case "turn_end":
      return {
        running: false,
        items: [
          ...state.items.map((item) =>
            item.kind === "assistant" && item.streaming ? { ...item, streaming: false } : item,
          ),
          {
            kind: "turn_end",
            id: `${event.data.taskId}:end`,
            status: event.data.status,
            iterations: event.data.iterations,
          },
        ],
      };
    // Not rendered yet: tool cards, approvals, plans, compaction and the rest arrive with the
    // full chat view. Listing them keeps this switch exhaustive, so a new event type added to
    // the protocol fails `npm run typecheck` until it is handled here.
    case "llm_request":
    case "tool_proposed":
    case "permission_required":
    case "tool_started":
    case "tool_finished":
    case "iteration_end":
    case "interrupted":
    case "compacting":
    case "compacted":
    case "queue_steering":
    case "ask_user_question":
    case "plan_proposed":
    case "directory_requested":
    case "session_named":
    case "tool_output":
    case "todos_updated":
      return state;
    default: {
      // Compile time: every event type is handled above. Run time: a newer backend may send
      // a type this build does not know; ignore it rather than break the stream.
      const unknown: never = event;
      console.warn("unknown event type", unknown);
      return state;
    }
  }
}

/** A local failure (not a protocol event), shown in the transcript. */
export function withNotice(state: Transcript, text: string): Transcript {
  return {
    running: false,
    items: [...state.items, { kind: "notice", id: `local:${state.items.length}`, tone: "error", text }],
  };
}
