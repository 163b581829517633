import { describe, expect, it } from "vitest";
import type { Event } from "./bindings/Event";
import type { TokenUsage } from "./bindings/TokenUsage";
import {
  applyEvents,
  chatFrom,
  closeStaleTools,
  emptyChat,
  markAnswered,
  prependHistory,
  type ChatState,
  type Item,
} from "./transcript";

const task = "t1";
const usage = (input: number, output: number, cached = 0): TokenUsage => ({
  input_tokens: input,
  output_tokens: output,
  cached_input_tokens: cached,
  reasoning_tokens: 0,
  cache_write_tokens: 0,
});
const turnStart = (input: string, turn = 1): Event => ({
  type: "turn_start",
  data: { taskId: task, input, sessionId: "s1", turn },
});
const delta = (reqId: string, text: string): Event => ({ type: "assistant_delta", data: { text, reqId, taskId: task } });
const message = (reqId: string, text: string, u?: TokenUsage, costUsd?: number): Event => ({
  type: "assistant_message",
  data: { text, reasoning: "", tool_calls: [], usage: u, costUsd, reqId, taskId: task, logTime: "2026-01-01T00:00:00Z" },
});
const proposed = (reqId: string, name = "write_file"): Event => ({
  type: "tool_proposed",
  data: { reqId, name, arguments: { path: "a.txt" }, taskId: task },
});
const permission = (reqId: string): Event => ({
  type: "permission_required",
  data: { taskId: task, reqId, requestId: `rq_${reqId}`, name: "write_file", arguments: { path: "a.txt" }, reason: "writes a file", category: "edit" },
});
const started = (reqId: string): Event => ({
  type: "tool_started",
  data: { taskId: task, reqId, name: "write_file", startTime: "2026-01-01T00:00:01Z" },
});
const finished = (reqId: string, status: "ok" | "error" | "denied" | "interrupted"): Event => ({
  type: "tool_finished",
  data: { taskId: task, reqId, name: "write_file", status, duration: 12, result_preview: "done" },
});
const turnEnd = (status: "completed" | "interrupted" | "error" = "completed"): Event => ({
  type: "turn_end",
  data: { status, iterations: 2, produced_files: [], taskId: task },
});

const fold = (events: Event[], state: ChatState = emptyChat) => applyEvents(state, events);
const kinds = (s: ChatState) => s.items.map((i) => i.kind);
function only<K extends Item["kind"]>(s: ChatState, kind: K): Extract<Item, { kind: K }> {
  const found = s.items.filter((i): i is Extract<Item, { kind: K }> => i.kind === kind);
  expect(found).toHaveLength(1);
  return found[0] as Extract<Item, { kind: K }>;
}

describe("applyEvents", () => {
  it("streams deltas into one assistant item that the final message replaces", () => {
    const s = fold([turnStart("hi"), delta("r1", "Hel"), delta("r1", "lo")]);
    expect(s.running).toBe(true);
    expect(only(s, "assistant")).toMatchObject({ text: "Hello", streaming: true });
    const done = fold([message("r1", "Hello!"), turnEnd()], s);
    expect(only(done, "assistant")).toMatchObject({ text: "Hello!", streaming: false });
    expect(kinds(done)).toEqual(["user", "assistant", "turn_end"]);
    expect(done.running).toBe(false);
  });

  it("is pure: folding does not change the state it started from", () => {
    const s = fold([turnStart("hi"), delta("r1", "a")]);
    const snapshot = JSON.stringify(s);
    fold([delta("r1", "b"), turnEnd()], s);
    fold([delta("r1", "c")], s);
    expect(JSON.stringify(s)).toBe(snapshot);
    expect(fold([], s)).toBe(s);
  });

  it("folds one batch the same as the same events one by one", () => {
    const events = [turnStart("go"), proposed("c1"), permission("c1"), started("c1"), finished("c1", "ok"), message("r1", "ok"), turnEnd()];
    const batched = fold(events);
    let single: ChatState = emptyChat;
    for (const e of events) single = fold([e], single);
    expect(single).toEqual(batched);
  });

  it("walks a tool call through approval, running and its result", () => {
    let s = fold([turnStart("edit"), proposed("c1"), permission("c1")]);
    expect(only(s, "tool")).toMatchObject({ state: "awaiting", approval: { state: "pending", reason: "writes a file" } });
    s = fold([started("c1")], s);
    expect(only(s, "tool")).toMatchObject({ state: "running", approval: { state: "answered" } });
    s = fold([finished("c1", "denied")], s);
    expect(only(s, "tool")).toMatchObject({ state: "denied", durationMs: 12, preview: "done" });
  });

  it("returns a running call to running once a request it made meanwhile is answered", () => {
    let s = fold([turnStart("sample"), proposed("c1"), started("c1"), permission("c1")]);
    expect(only(s, "tool")).toMatchObject({ state: "awaiting" });
    s = markAnswered(s, "c1", "answered");
    expect(only(s, "tool")).toMatchObject({ state: "running", approval: { state: "answered" } });
  });

  it("shows an MCP server's form and marks it expired when the turn ends unanswered", () => {
    const ask: Event = {
      type: "elicitation_requested",
      data: { taskId: "t", reqId: "c1", requestId: "rq1", server: "every", message: "Your name?", mode: "form", schema: { type: "object", properties: {} } },
    };
    let s = fold([turnStart("form"), ask]);
    expect(only(s, "elicitation")).toMatchObject({ server: "every", requestId: "rq1", mode: "form", state: "pending" });
    s = fold([turnEnd()], s);
    expect(only(s, "elicitation")).toMatchObject({ state: "expired" });
  });

  it("shows an MCP server's log line in the output of the call it came during", () => {
    const log: Event = {
      type: "mcp_log",
      data: { taskId: task, reqId: "c1", server: "probe", level: "warning", logger: "probe", message: "disk 93% full" },
    };
    const s = fold([turnStart("go"), proposed("c1"), started("c1"), log]);
    expect(only(s, "tool").output).toBe("[probe warning] disk 93% full\n");
    // A line for a call the chat does not show changes nothing.
    const other: Event = { ...log, data: { ...log.data, reqId: "zz" } };
    expect(fold([other], s)).toEqual(s);
  });

  it("ends whatever still waited when the turn ends", () => {
    const s = fold([
      turnStart("q"),
      { type: "ask_user_question", data: { taskId: task, requestId: "rq_1", question: "Which?", options: ["a"], allowText: false, multi: false } },
      proposed("c1"),
      permission("c1"),
      delta("r1", "partial"),
      turnEnd("interrupted"),
    ]);
    expect(only(s, "question").state).toBe("expired");
    expect(only(s, "tool")).toMatchObject({ state: "interrupted", approval: { state: "expired" } });
    expect(only(s, "assistant").streaming).toBe(false);
    expect(only(s, "turn_end")).toMatchObject({ status: "interrupted", turn: 1 });
  });

  it("counts tokens and the backend's costs, and replies without a price as unpriced", () => {
    const priced = fold([
      turnStart("x"),
      message("r1", "a", usage(1_000_000, 500_000, 200_000), 6.8),
      message("r2", "b", undefined, 9),
    ]);
    // The replies' own prices add up; a reply without usage costs nothing.
    expect(priced.meter.cost).toBeCloseTo(6.8);
    expect(priced.meter).toMatchObject({ input: 1_000_000, output: 500_000, cached: 200_000, unpriced: 0, context: 1_500_000 });
    const unpriced = fold([turnStart("x"), message("r1", "a", usage(10, 5))]);
    expect(unpriced.meter).toMatchObject({ cost: 0, unpriced: 1 });
  });

  it("marks queued steering injected when the engine injects it", () => {
    const queued: ChatState = { ...emptyChat, steering: [{ text: "also add tests", state: "queued" }] };
    const s = fold([turnStart("go"), { type: "queue_steering", data: { text: "also add tests", taskId: task } }], queued);
    expect(s.steering).toEqual([{ text: "also add tests", state: "injected" }]);
    expect(s.items.filter((i) => i.kind === "user").map((i) => (i.kind === "user" ? i.steering : null))).toEqual([false, true]);
  });

  it("a turn the engine started from leftover steering is marked by its source, not by its text", () => {
    const queued: ChatState = {
      ...emptyChat,
      steering: [
        { text: "also add tests", state: "queued" },
        { text: "and docs", state: "queued" },
      ],
    };
    const steeringStart: Event = {
      type: "turn_start",
      data: { taskId: "t2", input: "also add tests", sessionId: "s1", turn: 2, source: "steering" },
    };
    const s = fold([steeringStart, { type: "queue_steering", data: { text: "and docs", taskId: "t2" } }], queued);
    expect(s.steering).toEqual([
      { text: "also add tests", state: "injected" },
      { text: "and docs", state: "injected" },
    ]);
    const users = s.items.filter((i) => i.kind === "user");
    expect(users.map((u) => (u.kind === "user" ? [u.text, u.steering] : null))).toEqual([
      ["also add tests", true],
      ["and docs", true],
    ]);
    // New input whose text happens to match a queued chip is still the user's own turn.
    const typed = fold([turnStart("and docs")], queued);
    expect(only(typed, "user").steering).toBe(false);
    expect(typed.steering.every((x) => x.state === "queued")).toBe(true);
  });

  it("takes a tool's kind, truncation and attachments from the engine's events", () => {
    const s = fold([
      turnStart("x"),
      { type: "tool_proposed", data: { reqId: "c1", name: "fancy_edit", arguments: {}, taskId: task, kind: "edit" } },
      {
        type: "tool_finished",
        data: {
          taskId: task,
          reqId: "c1",
          name: "fancy_edit",
          status: "ok",
          result_preview: "short…",
          kind: "edit",
          truncated: false,
          attachments: [{ kind: "image", mimeType: "image/png" }],
        },
      },
    ]);
    expect(only(s, "tool")).toMatchObject({
      toolKind: "edit",
      truncated: false,
      attachments: [{ kind: "image", mimeType: "image/png" }],
    });
    // A log written before the engine said the kind: the name still tells.
    const old = fold([turnStart("x"), proposed("c2", "run_shell"), finished("c2", "ok")]);
    expect(only(old, "tool")).toMatchObject({ toolKind: "command", truncated: null, attachments: [] });
  });

  it("shows an error as a notice and remembers whether it can be retried", () => {
    const s = fold([turnStart("x"), {
        type: "error",
        data: { error: "rate limited", error_type: "rate_limit", retriable: true, iteration: 1, reqId: "r1", logTime: "", taskId: task },
      }, turnEnd("error")]);
    expect(only(s, "notice")).toMatchObject({ tone: "error", text: "rate limited" });
    expect(only(s, "turn_end").retriable).toBe(true);
  });

  it("ignores an event type it does not know instead of breaking the stream", () => {
    const s = fold([turnStart("x"), { type: "from_the_future", data: {} } as unknown as Event, delta("r1", "still here")]);
    expect(only(s, "assistant").text).toBe("still here");
  });
});

describe("stale files", () => {
  it("keeps the typed list of files changed since read, never the model's notice text", () => {
    const done: Event = {
      type: "tool_finished",
      data: { taskId: task, reqId: "c1", name: "list_files", status: "ok", result_preview: "a.txt", staleFiles: ["a.txt"] },
    };
    const s = fold([turnStart("x"), proposed("c1"), done]);
    const card = only(s, "tool");
    expect(card.stale).toEqual(["a.txt"]);
    expect(card.preview).toBe("a.txt");
  });
});

describe("llm_retry", () => {
  it("drops the failed attempt's partial text so the retry streams the answer alone", () => {
    const retry: Event = { type: "llm_retry", data: { attempt: 1, max: 3, reason: "stream cut", waitMs: 500, iteration: 1, reqId: "r1" } };
    const s = fold([turnStart("x"), delta("r1", "Half an ans"), retry, delta("r1", "The answer.")]);
    expect(only(s, "assistant").text).toBe("The answer.");
    expect(s.items.some((i) => i.kind === "notice" && i.tone === "info")).toBe(true);
  });
});

describe("closeStaleTools and markAnswered", () => {
  it("interrupts calls of a turn that never ended and keeps finished ones", () => {
    const s = fold([turnStart("x"), proposed("c1"), permission("c1"), proposed("c2"), started("c2"), finished("c2", "ok")]);
    const closed = closeStaleTools(s);
    const tools = closed.items.filter((i) => i.kind === "tool");
    expect(tools.map((t) => (t.kind === "tool" ? t.state : null))).toEqual(["interrupted", "ok"]);
    const clean = closeStaleTools(fold([turnEnd()], s));
    expect(closeStaleTools(clean)).toBe(clean);
  });

  it("marks an approval answered by its id", () => {
    const s = fold([turnStart("x"), proposed("c1"), permission("c1")]);
    expect(only(markAnswered(s, "c1", "answered"), "tool").approval?.state).toBe("answered");
  });
});

describe("paged history", () => {
  // Each turn a task of its own, as the engine logs them.
  const turn = (n: number): Event[] =>
    [
      turnStart(`question ${n}`, n),
      { type: "llm_request", data: { taskId: task, reqId: `r${n}`, logTime: "2026-01-01T00:00:00Z", model: "m", msgCount: 1, toolCount: 0 } } as Event,
      message(`r${n}`, `answer ${n}`, usage(100, 10), 0.5),
      turnEnd(),
    ].map((e) => ({ ...e, data: { ...e.data, taskId: `t${n}` } }) as Event);
  const texts = (s: ChatState) => s.items.flatMap((i) => (i.kind === "user" || i.kind === "assistant" ? [i.text] : []));

  it("starts the meter from what the older turns used and prepends them once loaded", () => {
    const earlier = { requests: 2, input: 200, output: 20, cached: 0, cost: 1, unpriced: 0 };
    const shown = fold([...turn(3), ...turn(4)], chatFrom(earlier, 2));
    expect(shown.historyBefore).toBe(2);
    expect(shown.meter.requests).toBe(4);
    expect(shown.meter.input).toBe(400);
    expect(shown.meter.cost).toBe(2);
    const all = prependHistory(shown, [...turn(1), ...turn(2)], 0);
    expect(all.historyBefore).toBeNull();
    expect(texts(all)).toEqual(["question 1", "answer 1", "question 2", "answer 2", "question 3", "answer 3", "question 4", "answer 4"]);
    // The older turns' usage was counted already; their ids never collide with newer ones.
    expect(all.meter).toEqual(shown.meter);
    expect(new Set(all.items.map((i) => i.id)).size).toBe(all.items.length);
    // Events of the running turn still fold into the newest items.
    const more = fold([message("r4", "answer 4, revised")], all);
    expect(texts(more).at(-1)).toBe("answer 4, revised");
  });
});

describe("compaction", () => {
  const state = {
    compactions: 2,
    summaries: 1,
    trimmed: 5,
    tokensBefore: 9000,
    tokensAfter: 2100,
    thresholdTokens: 8000,
    stalled: 0,
    summaryModel: "summary-model",
    summaryEffort: "low",
  };
  const compacting: Event = {
    type: "compacting",
    data: { taskId: task, trigger: "threshold", phase: "summary", tokens: 9000, estimated: true, contextWindow: 10000, thresholdPct: 0.8, thresholdTokens: 8000, outboundMessages: 40 },
  };
  it("keeps the session's compaction state from the last compacted event", () => {
    const s = fold([
      turnStart("go"),
      compacting,
      { type: "compacted", data: { reqId: "r", taskId: task, method: "summarized", messagesBefore: 40, messagesAfter: 6, state } },
    ]);
    expect(s.compaction).toEqual(state);
    const item = s.items.find((i) => i.kind === "compaction");
    expect(item?.kind === "compaction" && item.done && item.state?.tokensAfter).toBe(2100);
  });
  it("reads a log written before the state existed", () => {
    const s = fold([
      turnStart("go"),
      { type: "compacted", data: { reqId: "", taskId: task, method: "summary", messagesBefore: 9, messagesAfter: 3 } },
    ]);
    expect(s.compaction).toBeNull();
    const item = s.items.find((i) => i.kind === "compaction");
    expect(item?.kind === "compaction" && item.state).toBeNull();
  });
});

describe("model switch", () => {
  it("is said in the transcript as a notice", () => {
    const s = fold([
      turnStart("go"),
      {
        type: "model_switched",
        data: {
          taskId: task,
          model: "gpt-4",
          previous: "gpt-4o",
          contextWindow: 8192,
          thresholdTokens: 6553,
          vision: false,
          priced: true,
          toolsAdded: [],
          toolsRemoved: ["read_image"],
          message: "model: gpt-4 (was gpt-4o); context window 8192 tokens",
        },
      },
    ]);
    const notice = s.items.find((i) => i.kind === "notice");
    expect(notice?.kind === "notice" && notice.text).toContain("gpt-4 (was gpt-4o)");
  });
});

describe("an edit that changed nothing", () => {
  it("is marked unchanged from the typed flag, and older logs without it are not", () => {
    const same: Event = {
      type: "tool_finished",
      data: { taskId: task, reqId: "w1", name: "write_file", status: "ok", duration: 3, result_preview: "a.txt already had it", unchanged: true },
    };
    const s = fold([proposed("w1"), started("w1"), same]);
    expect(only(s, "tool").unchanged).toBe(true);
    const old = fold([proposed("w2"), started("w2"), finished("w2", "ok")]);
    expect(only(old, "tool").unchanged).toBe(false);
  });
});

describe("a tool card's subject", () => {
  const proposed = (data: Record<string, unknown>): Event =>
    ({ type: "tool_proposed", data: { reqId: "c1", taskId: "t", name: "apply_patch", arguments: { patch: "*** Begin Patch" }, ...data } }) as Event;
  const subject = (events: Event[]) => {
    const t = applyEvents(emptyChat, events).items.find((i) => i.kind === "tool");
    return t?.kind === "tool" ? t.subject : undefined;
  };
  it("is the one the tool said (a patch names the files its text writes)", () => {
    expect(subject([proposed({ subject: "a.txt, b/c.txt" })])).toBe("a.txt, b/c.txt");
  });
  it("falls back to the conventional arguments for a log written before tools said it", () => {
    expect(subject([proposed({ name: "run_shell", arguments: { command: "make test" } })])).toBe("make test");
    expect(subject([proposed({})])).toBeNull();
  });
});
