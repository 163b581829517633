// The start-up benchmark's page (CAIRN_BENCH=1, see scripts/bench-app.sh): reports the first
// paint, idles while the backend measures memory, then measures frame times of a 5,000-item
// transcript while scrolling it and while a reply streams into it.
import { useEffect, useRef, useState } from "react";
import type { Event } from "../bindings/Event";
import { I18nContext, translator } from "../i18n";
import { benchMark, describeError } from "../ipc";
import { applyEvents, emptyChat, type ChatState } from "../transcript";
import type { TranscriptActions } from "./Transcript";
import { Welcome } from "./Welcome";

// Loaded after the idle measurement, as the app loads it only once a workspace is open. Held in
// state rather than behind React.lazy: Suspense would delay the mount it measures.
type TranscriptModule = typeof import("./Transcript");
const loadTranscript = (): Promise<TranscriptModule> => import("./Transcript");

const ITEMS = 5000;
const SCROLL_FRAMES = 180;
const STREAM_FRAMES = 240;
/** Sessions streaming at once in the parallel-agents phase (one shown, the rest folded). */
const PARALLEL = 8;

const noop = () => undefined;
const actions: TranscriptActions = {
  approve: noop,
  retry: noop,
  question: noop,
  plan: noop,
  directory: noop,
  elicitation: noop,
  fail: noop,
  nativeApprovals: false,
  running: false,
  timeline: { timeline: null, showDiff: noop, askRestore: noop, askRewind: noop },
};

function syntheticEvents(): Event[] {
  const events: Event[] = [];
  const task = "bench";
  for (let i = 0; events.length < ITEMS * 1.5; i++) {
    const taskId = `${task}-${i}`;
    events.push({ type: "turn_start", data: { taskId, input: `Question ${i}: what does module ${i} do?`, sessionId: "bench", turn: i + 1 } });
    events.push({
      type: "assistant_message",
      data: {
        text: `Module **${i}** parses input and writes \`out_${i}.json\`.\n\n- step one\n- step two\n\n\`\`\`rust\nfn f${i}(x: u32) -> u32 {\n    x * ${i}\n}\n\`\`\``,
        reasoning: "",
        tool_calls: [],
        reqId: `${taskId}-r`,
        taskId,
        logTime: "2026-01-01T00:00:00Z",
        usage: { input_tokens: 1000, output_tokens: 200, cached_input_tokens: 0, reasoning_tokens: 0, cache_write_tokens: 0 },
      },
    });
    if (i % 3 === 0) {
      const reqId = `${taskId}-c`;
      events.push({ type: "tool_proposed", data: { reqId, name: "run_shell", arguments: { command: `cargo test -p m${i}` }, taskId } });
      events.push({
        type: "tool_finished",
        data: { taskId, reqId, name: "run_shell", status: "ok", duration: 1234, result_preview: "test result: ok. 12 passed" },
      });
    }
  }
  return events;
}

function stats(deltas: number[]) {
  const sorted = deltas.slice().sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return { frames: deltas.length, p50Ms: at(0.5), p95Ms: at(0.95), maxMs: sorted[sorted.length - 1] ?? 0 };
}

/** Runs `step(i)` once per animation frame for `n` frames; returns the frame intervals. */
function frames(n: number, step: (i: number) => void): Promise<number[]> {
  return new Promise((resolve) => {
    const deltas: number[] = [];
    let last = -1;
    let i = 0;
    const tick = (now: number) => {
      if (last >= 0) deltas.push(now - last);
      last = now;
      if (i >= n) {
        resolve(deltas);
        return;
      }
      step(i++);
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
}

const nextFrame = () => new Promise<number>((r) => requestAnimationFrame(r));

export function BenchHarness() {
  const [phase, setPhase] = useState<"paint" | "transcript">("paint");
  const [chat, setChat] = useState<ChatState>(emptyChat);
  const [view, setView] = useState<TranscriptModule | null>(null);
  const chatRef = useRef(chat);
  chatRef.current = chat;
  const t = translator("en");

  useEffect(() => {
    let cancelled = false;
    const run = async () => {
      // First paint: the welcome screen without its data (main.tsx); then with it, after
      // `bootstrap` answered (this screen).
      await nextFrame();
      await nextFrame();
      const contentEpochMs = performance.timeOrigin + performance.now();
      const paintEpochMs = (window as unknown as { __cairnFirstPaint?: number }).__cairnFirstPaint ?? null;
      const nav = performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming | undefined;
      const at = (ms: number | undefined) => (ms === undefined ? null : performance.timeOrigin + ms);
      const boot = (window as unknown as { __cairnBoot?: number[] }).__cairnBoot ?? [];
      // Wall-clock times (ms since the epoch); the backend turns them into ms since start.
      const timeline = {
        navigationStart: performance.timeOrigin,
        htmlLoaded: at(nav?.responseEnd),
        domReady: at(nav?.domContentLoadedEventEnd),
        firstPaint: paintEpochMs,
        bootstrapAsked: boot[0] ?? null,
        bootstrapAnswered: boot[1] ?? null,
        welcomeWithData: contentEpochMs,
      };
      const paint = (await benchMark("first_paint", { paintEpochMs, contentEpochMs, timeline })) as Record<string, unknown>;
      const loaded = await loadTranscript();
      setView(loaded);
      // Baseline: frames that change one line of text, the floor of this display.
      const probe = document.createElement("div");
      probe.className = "bench-probe";
      document.body.appendChild(probe);
      const baseline = await frames(120, (i) => {
        probe.textContent = `frame ${i}`;
      });
      probe.remove();
      const events = syntheticEvents();
      const t0 = performance.now();
      const folded = applyEvents(emptyChat, events);
      const full = { ...folded, items: folded.items.slice(0, ITEMS) };
      const foldMs = performance.now() - t0;
      setPhase("transcript");
      setChat(full);
      const t1 = performance.now();
      await nextFrame();
      await nextFrame();
      const mountMs = performance.now() - t1;
      const el = document.querySelector<HTMLElement>("[data-testid=transcript]");
      if (el === null) throw new Error("no transcript element");
      // A fast fling: one screen per frame (about 40,000 px/s), upwards from the bottom.
      const page = el.clientHeight;
      const scroll = await frames(SCROLL_FRAMES, () => {
        el.scrollTop = Math.max(0, el.scrollTop - page);
      });
      el.scrollTop = el.scrollHeight;
      await nextFrame();
      const taskId = "bench-stream";
      setChat((c) =>
        applyEvents(c, [{ type: "turn_start", data: { taskId, input: "Stream a long answer", sessionId: "bench", turn: 9999 } }]),
      );
      const stream = await frames(STREAM_FRAMES, (i) => {
        const text = i % 20 === 19 ? "\n\n```ts\nconst x = 1;\n```\n\n" : `word${i} and some more text `;
        setChat((c) => applyEvents(c, [{ type: "assistant_delta", data: { text, reqId: `${taskId}-r`, taskId } }]));
      });
      // Parallel agents: the other sessions stream at the same time; their transcripts fold in
      // memory, as the app keeps sessions that are not shown, and only the shown one renders.
      const others: ChatState[] = Array.from({ length: PARALLEL - 1 }, (_, k) =>
        applyEvents(emptyChat, [
          { type: "turn_start", data: { taskId: `bg-${k}`, input: "Work in the background", sessionId: `bg-${k}`, turn: 1 } },
        ]),
      );
      const parallel = await frames(STREAM_FRAMES, (i) => {
        const text = i % 20 === 19 ? "\n\n```ts\nconst y = 2;\n```\n\n" : `more${i} words of the answer `;
        others.forEach((chat, k) => {
          others[k] = applyEvents(chat, [
            { type: "assistant_delta", data: { text, reqId: `bg-${k}-r`, taskId: `bg-${k}` } },
          ]);
        });
        setChat((c) => applyEvents(c, [{ type: "assistant_delta", data: { text, reqId: `${taskId}-r`, taskId } }]));
      });
      const report = {
        ...paint,
        transcript: {
          baseline: stats(baseline),
          items: full.items.length,
          foldMs,
          mountMs,
          scroll: stats(scroll),
          stream: stats(stream),
          parallel: { sessions: PARALLEL, ...stats(parallel) },
          domRows: document.querySelectorAll(".transcript-row").length,
        },
      };
      if (!cancelled) await benchMark("done", report);
    };
    run().catch((e: unknown) => benchMark("done", { error: describeError(e) }));
    return () => {
      cancelled = true;
    };
  }, []);

  return (
    <I18nContext.Provider value={t}>
      <div className="app">
        {phase === "paint" || view === null ? (
          <Welcome recent={[]} error={null} opening={false} stateDir="" lang="en" onPick={noop} onOpen={noop} onForget={noop} />
        ) : (
          <div className="workbench bench">
            <main className="chat">
              <view.Transcript items={chat.items} actions={actions} />
            </main>
          </div>
        )}
      </div>
    </I18nContext.Provider>
  );
}
