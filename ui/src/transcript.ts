// The chat model: protocol events folded into what the chat view renders (transcript items,
// todos, plan, queued steering, usage). Pure: every fold returns a new value, and a batch of
// events copies the item list once, so replaying a long session stays linear.
import type { AlwaysAllow } from "./bindings/AlwaysAllow";
import type { CarriedRef } from "./bindings/CarriedRef";
import type { EarlierUsage } from "./bindings/app/EarlierUsage";
import type { MentionedFile } from "./bindings/MentionedFile";
import type { StoredRef } from "./bindings/StoredRef";
import type { CompactionState } from "./bindings/CompactionState";
import type { Event } from "./bindings/Event";
import type { ResultAttachment } from "./bindings/ResultAttachment";
import type { TodoItem } from "./bindings/TodoItem";
import type { ToolKind } from "./bindings/ToolKind";
import type { TokenUsage } from "./bindings/TokenUsage";
import type { TurnStatus } from "./bindings/TurnStatus";

/** Where a tool call is. */
export type ToolState = "proposed" | "awaiting" | "running" | "ok" | "error" | "denied" | "interrupted";

/** Whether a question, plan, directory request or approval still waits. */
export type AskState = "pending" | "answered" | "expired";

/** One rendered block of the transcript. */
export type Item =
  | {
      kind: "user";
      id: string;
      text: string;
      steering: boolean;
      /** Images sent with it (stored under the session). */
      images?: { path: string; name: string; mimeType: string }[];
      /** Workspace files its `@path` mentions attached. */
      files?: string[];
      /** Sent, its turn not started yet (waiting for a free turn slot). */
      waiting?: boolean;
    }
  | { kind: "assistant"; id: string; text: string; reasoning: string; streaming: boolean; usage: TokenUsage | null }
  | {
      kind: "tool";
      id: string;
      name: string;
      /** What kind of work the tool does (from the engine). */
      toolKind: ToolKind;
      /** What the call is about, as the tool said it (`null`: nothing named). */
      subject: string | null;
      args: unknown;
      state: ToolState;
      startedAt: number | null;
      durationMs: number | null;
      output: string;
      preview: string | null;
      /** The preview is only the start of the result; `null`: not said (an older log). */
      truncated: boolean | null;
      /** What the result carries besides text (images). */
      attachments: ResultAttachment[];
      /** Files the agent read that changed on disk since (the model was told in its result). */
      stale?: string[];
      /** A file edit that succeeded and changed nothing (the card says so instead of a diff). */
      unchanged?: boolean;
      reason: string | null;
      /** A pending or answered approval; `always` is the allowance on offer (none for shell operators). */
      approval: { reason: string; category: string; always: AlwaysAllow | null; state: AskState } | null;
    }
  | {
      kind: "notice";
      id: string;
      tone: "info" | "error";
      text: string;
      /** An automatic retry of a failed model request. */
      retry?: boolean;
      /** What the notice offers to do about it (a rejected key, an unknown model, an
       * unreachable endpoint: open Settings; the spending cap reached: raise it). */
      action?: "settings" | "budget";
      /** The app's own words for it, where the runtime's are meant for a terminal (a
       * command to type, a file path, an OS error number). */
      words?: "error.saveFailed" | "error.budgetExceeded";
    }
  | {
      kind: "compaction";
      id: string;
      done: boolean;
      before: number;
      after: number;
      summary: string | null;
      method: string;
      /** The session's compaction state after this pass (tokens, counts, summary model). */
      state: CompactionState | null;
    }
  | { kind: "question"; id: string; requestId: string; question: string; options: string[]; allowText: boolean; multi: boolean; state: AskState }
  | { kind: "plan"; id: string; requestId: string; plan: string; state: AskState | "rejected" }
  | { kind: "directory"; id: string; requestId: string; path: string; reason: string; writable: boolean; state: AskState }
  | {
      kind: "elicitation";
      id: string;
      requestId: string;
      server: string;
      message: string;
      mode: "form" | "url";
      schema: Record<string, unknown> | null;
      url: string | null;
      state: AskState;
    }
  | { kind: "turn_end"; id: string; status: TurnStatus; iterations: number; retriable: boolean; turn: number };

/** A steering message typed while a turn ran. */
export type Steering = { text: string; state: "queued" | "injected" };

/** Token and cost totals of the session. */
export type Meter = {
  requests: number;
  input: number;
  output: number;
  cached: number;
  cost: number;
  unpriced: number;
  /** Tokens the last request carried (input + output): the context gauge. */
  context: number;
};

/** Everything the chat view shows for one session. */
export type ChatState = {
  items: Item[];
  running: boolean;
  todos: TodoItem[];
  steering: Steering[];
  meter: Meter;
  /** The last error of the running turn was retriable. */
  retriable: boolean;
  sessionName: string | null;
  /** The session turn (from 1) that started last. */
  turn: number;
  /** Where the older turns not loaded yet end (the history's `before`); null: none. */
  historyBefore: number | null;
  /** What compaction did in this session (from the last `compacted`); null: nothing yet. */
  compaction: CompactionState | null;
};

/** An empty chat. */
export const emptyChat: ChatState = {
  items: [],
  running: false,
  todos: [],
  steering: [],
  meter: { requests: 0, input: 0, output: 0, cached: 0, cost: 0, unpriced: 0, context: 0 },
  retriable: false,
  sessionName: null,
  turn: 0,
  historyBefore: null,
  compaction: null,
};

/**
 * The kind of a tool named `name`, for events logged before the engine said it (old
 * sessions): what the name suggests.
 */
export function legacyKind(name: string): ToolKind {
  if (name.startsWith("todo")) return "todo";
  if (name === "ask_user" || name === "propose_plan" || name === "request_directory") return "question";
  if (name.includes("shell") || name.startsWith("terminal") || name.endsWith("_command")) return "command";
  if (name.includes("write") || name.includes("replace") || name.includes("patch") || name.includes("diff")) {
    return name.startsWith("git") ? "git" : "edit";
  }
  if (name.includes("read") || name.includes("list")) return "read";
  if (name.includes("grep") || name.includes("search")) return "search";
  if (name.startsWith("git")) return "git";
  if (name.startsWith("web")) return "web";
  return "other";
}

/**
 * What a call is about, for events logged before the engine said it (old sessions): the first
 * of the arguments tools conventionally name it by.
 */
export function legacySubject(args: unknown): string | null {
  if (typeof args !== "object" || args === null) return null;
  const a = args as Record<string, unknown>;
  for (const k of ["command", "path", "pattern", "query", "url", "task", "task_id"]) {
    const v = a[k];
    if (typeof v === "string" && v.trim() !== "") return v;
  }
  return null;
}

/** Mutable working copy of a state while a batch of events is folded. */
class Draft {
  items: Item[];
  index: Map<string, number>;
  s: ChatState;
  constructor(state: ChatState, index: Map<string, number> | null) {
    this.s = { ...state, meter: { ...state.meter }, steering: state.steering.slice() };
    this.items = state.items.slice();
    // Copied: a reducer may fold the same state twice (React strict mode).
    this.index = index !== null ? new Map(index) : new Map(this.items.map((item, i) => [item.id, i]));
  }
  find<K extends Item["kind"]>(id: string, kind: K): Extract<Item, { kind: K }> | null {
    const i = this.index.get(id);
    if (i === undefined) return null;
    const item = this.items[i];
    return item !== undefined && item.kind === kind ? (item as Extract<Item, { kind: K }>) : null;
  }
  put(item: Item) {
    const i = this.index.get(item.id);
    if (i === undefined) {
      this.index.set(item.id, this.items.length);
      this.items.push(item);
    } else {
      this.items[i] = item;
    }
  }
  /** Removes an item (a prompt shown while it waited for its turn). */
  drop(id: string) {
    const i = this.index.get(id);
    if (i === undefined) return;
    this.items.splice(i, 1);
    this.index = new Map(this.items.map((item, j) => [item.id, j]));
  }
  /** The last item of a kind that still waits. */
  lastPending<K extends "question" | "plan" | "directory">(kind: K): Extract<Item, { kind: K }> | null {
    for (let i = this.items.length - 1; i >= 0; i--) {
      const item = this.items[i];
      if (item !== undefined && item.kind === kind && item.state === "pending") return item as Extract<Item, { kind: K }>;
    }
    return null;
  }
  uid(prefix: string): string {
    return `${prefix}:${this.items.length}`;
  }
}

/** Cache of item positions for the last state produced, so folds skip rebuilding it. */
const indexCache = new WeakMap<Item[], Map<string, number>>();

function assistant(d: Draft, reqId: string) {
  return (
    d.find(reqId, "assistant") ?? {
      kind: "assistant" as const,
      id: reqId,
      text: "",
      reasoning: "",
      streaming: true,
      usage: null,
    }
  );
}

/** The images and mentioned files a `turn_start` or `queue_steering` carried (typed by the
 * runtime: saved attachments, then mentioned files; anything else is not shown). */
function carried(refs: CarriedRef[] | undefined): { images: NonNullable<Extract<Item, { kind: "user" }>["images"]>; files: string[] } {
  const images: { path: string; name: string; mimeType: string }[] = [];
  const files: string[] = [];
  for (const r of refs ?? []) {
    if (isMentioned(r)) files.push(r.path);
    else if (isStored(r) && r.mimeType.startsWith("image/") && r.path.startsWith("attachments/")) {
      images.push({ path: r.path, name: r.name, mimeType: r.mimeType });
    }
  }
  return { images, files };
}

const isMentioned = (r: CarriedRef): r is MentionedFile =>
  typeof r === "object" && r !== null && (r as { kind?: unknown }).kind === "file" && typeof (r as { path?: unknown }).path === "string";
const isStored = (r: CarriedRef): r is StoredRef =>
  typeof r === "object" && r !== null && typeof (r as { mimeType?: unknown }).mimeType === "string" && typeof (r as { path?: unknown }).path === "string";

/** Marks the first queued steering chip with this text as injected. */
function markInjected(s: ChatState, text: string) {
  let marked = false;
  s.steering = s.steering.map((x) => {
    if (!marked && x.state === "queued" && x.text === text) {
      marked = true;
      return { ...x, state: "injected" };
    }
    return x;
  });
}

function apply(d: Draft, event: Event) {
  const s = d.s;
  switch (event.type) {
    case "turn_start": {
      s.running = true;
      s.turn = event.data.turn;
      s.retriable = false;
      const input = event.data.input;
      // A turn the engine started from steering that arrived too late for the previous turn.
      const fromSteering = event.data.source === "steering";
      if (fromSteering) markInjected(s, input);
      d.drop(WAITING_ID);
      d.put({ kind: "user", id: `${event.data.taskId}:user`, text: input, steering: fromSteering, ...carried(event.data.attachments) });
      return;
    }
    case "assistant_delta": {
      const a = assistant(d, event.data.reqId);
      d.put({ ...a, text: a.text + event.data.text });
      return;
    }
    case "reasoning_delta": {
      const a = assistant(d, event.data.reqId);
      d.put({ ...a, reasoning: a.reasoning + event.data.text });
      return;
    }
    case "assistant_message": {
      const a = assistant(d, event.data.reqId);
      const usage = event.data.usage ?? null;
      if (event.data.text !== "" || event.data.reasoning !== "" || d.find(event.data.reqId, "assistant") !== null) {
        d.put({ ...a, text: event.data.text, reasoning: event.data.reasoning, streaming: false, usage });
      }
      if (usage !== null) {
        const m = s.meter;
        m.input += usage.input_tokens;
        m.output += usage.output_tokens;
        m.cached += usage.cached_input_tokens;
        m.context = usage.input_tokens + usage.output_tokens;
        // The backend prices each reply (the model table); no price means unknown.
        const cost = event.data.costUsd;
        if (cost === undefined) m.unpriced += 1;
        else m.cost += cost;
      }
      return;
    }
    case "llm_request":
      s.meter.requests += 1;
      return;
    case "tool_proposed":
      d.put({
        kind: "tool",
        id: event.data.reqId,
        name: event.data.name,
        toolKind: event.data.kind ?? legacyKind(event.data.name),
        subject: event.data.subject ?? legacySubject(event.data.arguments),
        args: event.data.arguments,
        state: "proposed",
        startedAt: null,
        durationMs: null,
        output: "",
        preview: null,
        truncated: null,
        attachments: [],
        reason: null,
        approval: null,
      });
      return;
    case "permission_required": {
      const t = d.find(event.data.reqId, "tool");
      if (t !== null) {
        d.put({
          ...t,
          state: "awaiting",
          approval: {
            reason: event.data.reason,
            category: event.data.category,
            always: event.data.alwaysAllow ?? null,
            state: "pending",
          },
        });
      }
      return;
    }
    case "tool_started": {
      const t = d.find(event.data.reqId, "tool");
      if (t !== null) {
        const approval = t.approval === null ? null : { ...t.approval, state: "answered" as const };
        const started = event.data.startTime ? Date.parse(event.data.startTime) : Date.now();
        d.put({ ...t, state: "running", startedAt: Number.isNaN(started) ? Date.now() : started, approval });
      }
      return;
    }
    case "tool_output": {
      const t = d.find(event.data.reqId, "tool");
      if (t !== null) d.put({ ...t, output: t.output + event.data.text });
      return;
    }
    case "mcp_log": {
      // A server's log line during its tool call: shown in that call's output, marked.
      const t = d.find(event.data.reqId, "tool");
      if (t !== null) {
        const sep = t.output === "" || t.output.endsWith("\n") ? "" : "\n";
        d.put({ ...t, output: `${t.output}${sep}[${event.data.server} ${event.data.level}] ${event.data.message}\n` });
      }
      return;
    }
    case "tool_finished": {
      const t = d.find(event.data.reqId, "tool") ?? {
        kind: "tool" as const,
        id: event.data.reqId,
        name: event.data.name,
        toolKind: event.data.kind ?? legacyKind(event.data.name),
        subject: null,
        args: null,
        state: "proposed" as const,
        startedAt: null,
        durationMs: null,
        output: "",
        preview: null,
        truncated: null,
        attachments: [],
        reason: null,
        approval: null,
      };
      const approval = t.approval === null ? null : { ...t.approval, state: "answered" as const };
      d.put({
        ...t,
        state: event.data.status,
        durationMs: event.data.duration ?? null,
        preview: event.data.result_preview ?? null,
        toolKind: event.data.kind ?? t.toolKind,
        truncated: event.data.truncated ?? null,
        attachments: event.data.attachments ?? [],
        stale: event.data.staleFiles ?? [],
        unchanged: event.data.unchanged ?? false,
        reason: event.data.reason ?? null,
        approval,
      });
      return;
    }
    case "error":
      s.retriable = event.data.retriable;
      d.put({
        kind: "notice",
        id: d.uid("error"),
        tone: "error",
        text: event.data.error,
        ...(errorAction(event.data.error_type) !== undefined ? { action: errorAction(event.data.error_type) } : {}),
        ...(errorWords(event.data.error_type) !== undefined ? { words: errorWords(event.data.error_type) } : {}),
      });
      return;
    case "budget_warning":
      d.put({ kind: "notice", id: d.uid("budget"), tone: "info", text: event.data.message });
      return;
    case "model_switched":
      d.put({ kind: "notice", id: d.uid("model"), tone: "info", text: event.data.message });
      return;
    case "llm_retry": {
      // The failed attempt's streamed text is not the answer: the retry streams it anew.
      const partial = d.find(event.data.reqId, "assistant");
      if (partial !== null) d.put({ ...partial, text: "", reasoning: "" });
      const secs = Math.round(event.data.waitMs / 100) / 10;
      d.put({
        kind: "notice",
        id: `retry:${event.data.reqId}:${event.data.attempt}`,
        tone: "info",
        retry: true,
        text: `${event.data.attempt}/${event.data.max} · ${secs}s · ${event.data.reason}`,
      });
      return;
    }
    case "compacting":
      d.put({
        kind: "compaction",
        id: `compact:${event.data.taskId}:${d.items.length}`,
        done: false,
        before: 0,
        after: 0,
        summary: null,
        method: event.data.trigger,
        state: null,
      });
      return;
    case "compacted": {
      let last: Extract<Item, { kind: "compaction" }> | null = null;
      for (let i = d.items.length - 1; i >= 0; i--) {
        const it = d.items[i];
        if (it !== undefined && it.kind === "compaction" && !it.done) {
          last = it;
          break;
        }
      }
      const base = last ?? { kind: "compaction" as const, id: d.uid("compact"), done: false, before: 0, after: 0, summary: null, method: "", state: null };
      d.put({
        ...base,
        done: true,
        before: event.data.messagesBefore,
        after: event.data.messagesAfter,
        summary: event.data.summaryPreview ?? null,
        method: event.data.method,
        state: event.data.state ?? null,
      });
      if (event.data.state !== undefined) s.compaction = event.data.state;
      s.meter.context = 0;
      return;
    }
    case "queue_steering": {
      markInjected(s, event.data.text);
      d.put({ kind: "user", id: d.uid("steer"), text: event.data.text, steering: true, ...carried(event.data.attachments) });
      return;
    }
    case "ask_user_question":
      d.put({
        kind: "question",
        id: d.uid("question"),
        requestId: event.data.requestId,
        question: event.data.question,
        options: event.data.options,
        allowText: event.data.allowText,
        multi: event.data.multi,
        state: "pending",
      });
      return;
    case "plan_proposed":
      d.put({ kind: "plan", id: d.uid("plan"), requestId: event.data.requestId, plan: event.data.plan, state: "pending" });
      return;
    case "directory_requested":
      d.put({
        kind: "directory",
        id: d.uid("dir"),
        requestId: event.data.requestId,
        path: event.data.path,
        reason: event.data.reason,
        writable: event.data.writable,
        state: "pending",
      });
      return;
    case "elicitation_requested":
      d.put({
        kind: "elicitation",
        id: d.uid("elicit"),
        requestId: event.data.requestId,
        server: event.data.server,
        message: event.data.message,
        mode: event.data.mode,
        schema: event.data.schema ?? null,
        url: event.data.url ?? null,
        state: "pending",
      });
      return;
    case "todos_updated":
      s.todos = event.data.todos;
      return;
    case "session_named":
      s.sessionName = event.data.name;
      return;
    case "turn_end": {
      s.running = false;
      // Whatever still waited for the user is moot now.
      for (let i = 0; i < d.items.length; i++) {
        const it = d.items[i];
        if (it === undefined) continue;
        if (it.kind === "assistant" && it.streaming) d.items[i] = { ...it, streaming: false };
        if ((it.kind === "question" || it.kind === "plan" || it.kind === "directory" || it.kind === "elicitation") && it.state === "pending") {
          d.items[i] = { ...it, state: "expired" };
        }
        if (it.kind === "tool" && (it.state === "running" || it.state === "awaiting" || it.state === "proposed")) {
          d.items[i] = {
            ...it,
            state: "interrupted",
            approval: it.approval === null ? null : { ...it.approval, state: "expired" },
          };
        }
      }
      d.put({
        kind: "turn_end",
        id: `${event.data.taskId}:end`,
        status: event.data.status,
        iterations: event.data.iterations,
        retriable: event.data.status === "error" && s.retriable,
        turn: s.turn,
      });
      return;
    }
    case "interrupted":
    case "iteration_end":
      return;
    case "progress":
      // Long preparation before a turn (worktree creation, a first snapshot): the working
      // indicator already shows the turn is busy; the count is not part of the chat.
      return;
    case "subagent_event":
      // A child agent's own events (explore): only its final report reaches the chat, as the
      // explore tool card's result; the nested stream is not rendered yet.
      return;
    default: {
      // Compile time: every event type is handled above. Run time: a newer backend may send
      // a type this build does not know; ignore it rather than break the stream.
      const unknown: never = event;
      console.warn("unknown event type", unknown);
    }
  }
}

/** Folds a batch of events into the chat. */
export function applyEvents(state: ChatState, events: readonly Event[]): ChatState {
  if (events.length === 0) return state;
  const d = new Draft(state, indexCache.get(state.items) ?? null);
  for (const e of events) apply(d, e);
  const next = { ...d.s, items: d.items };
  indexCache.set(d.items, d.index);
  return next;
}

/** A chat whose meter starts from what the turns not loaded used (see `SessionView`). */
export function chatFrom(earlier: EarlierUsage, historyBefore: number | null): ChatState {
  return {
    ...emptyChat,
    historyBefore,
    meter: {
      ...emptyChat.meter,
      requests: earlier.requests,
      input: earlier.input,
      output: earlier.output,
      cached: earlier.cached,
      cost: earlier.cost,
      unpriced: earlier.unpriced,
    },
  };
}

/**
 * Puts a page of older turns before the chat's items. Their usage is already in the meter
 * (counted by the backend); their items get ids of their own, so they never collide with
 * the ones built from the newer events.
 */
export function prependHistory(state: ChatState, events: readonly Event[], first: number): ChatState {
  const older = closeStaleTools(applyEvents(emptyChat, events));
  const tag = `earlier-${first}/`;
  const items = older.items.map((it) => ({ ...it, id: tag + it.id }));
  return { ...state, items: [...items, ...state.items], historyBefore: first > 0 ? first : null };
}

/**
 * Marks the tool calls of a turn that never ended (the app stopped while they waited) as
 * interrupted, their approvals expired: nothing waits for them in this process. Resuming
 * the session asks again, and its events bring the cards back to life.
 */
export function closeStaleTools(state: ChatState): ChatState {
  let changed = false;
  const items = state.items.map((it) => {
    if (it.kind !== "tool" || !(it.state === "running" || it.state === "awaiting" || it.state === "proposed")) return it;
    changed = true;
    return { ...it, state: "interrupted" as const, approval: it.approval === null ? null : { ...it.approval, state: "expired" as const } };
  });
  return changed ? { ...state, items } : state;
}

/** Marks an answered question, plan or directory request. */
export function markAnswered(state: ChatState, id: string, answer: AskState | "rejected"): ChatState {
  return {
    ...state,
    items: state.items.map((it) => {
      if (it.id !== id) return it;
      if (it.kind === "plan") return { ...it, state: answer };
      if ((it.kind === "question" || it.kind === "directory" || it.kind === "elicitation") && answer !== "rejected") return { ...it, state: answer };
      if (it.kind === "tool" && it.approval !== null && answer !== "rejected") {
        // A request made while the call already ran (a sandboxed command's host, an MCP
        // server's sampling): the call goes on running once it is answered.
        const state = it.state === "awaiting" && it.startedAt !== null ? ("running" as const) : it.state;
        return { ...it, state, approval: { ...it.approval, state: answer } };
      }
      return it;
    }),
  };
}

/** What an error card offers besides Retry, by the runtime's `error_type` (a typed fact). */
export function errorAction(errorType: string): "settings" | "budget" | undefined {
  switch (errorType) {
    case "auth":
    case "model_not_found":
    case "quota_exhausted":
    case "network":
    case "server_error":
    case "timeout":
      return "settings";
    case "budget_exceeded":
      return "budget";
    default:
      return undefined;
  }
}

/** The app's own words for an error whose runtime text is meant for a terminal. */
export function errorWords(errorType: string): "error.saveFailed" | "error.budgetExceeded" | undefined {
  switch (errorType) {
    case "save_failed":
      return "error.saveFailed";
    case "budget_exceeded":
      return "error.budgetExceeded";
    default:
      return undefined;
  }
}

/** The id of the prompt shown while its turn waits to start. */
export const WAITING_ID = "waiting:prompt";

/**
 * The prompt just sent, shown at once (its turn may wait for a free slot: the message must not
 * vanish meanwhile); `turn_start` replaces it. `null` takes it away (the turn was refused).
 */
export function withWaitingPrompt(state: ChatState, text: string | null): ChatState {
  const items = state.items.filter((i) => i.id !== WAITING_ID);
  if (text !== null) items.push({ kind: "user", id: WAITING_ID, text, steering: false, waiting: true });
  return { ...state, items };
}

/** A local notice (not a protocol event), e.g. a failed command or what a slash command did. */
export function withNotice(state: ChatState, text: string, tone: "info" | "error" = "error", action?: "settings"): ChatState {
  const id = `local:${state.items.length}:${Date.now()}`;
  return {
    ...state,
    items: [...state.items, { kind: "notice", id, tone, text, ...(action === undefined ? {} : { action }) }],
  };
}

/** The latest plan, for the plan panel. */
export function latestPlan(state: ChatState): Extract<Item, { kind: "plan" }> | null {
  for (let i = state.items.length - 1; i >= 0; i--) {
    const it = state.items[i];
    if (it !== undefined && it.kind === "plan") return it;
  }
  return null;
}
