import { describe, expect, it } from "vitest";
import type { HistoryPage } from "./bindings/app/HistoryPage";
import type { SessionSearch } from "./bindings/app/SessionSearch";
import { baseId, fromFor, hitItemId, indexOfId, indexOfTurn, turnsIn, windowOf, withNewer, withOlder } from "./historyWindow";
import recorded from "./fixtures/long-session.json";

// Pages of a 12-turn log as the runtime returned them (see the fixture's "_").
const page = (name: "newest" | "older" | "home" | "second" | "atTurn7") => recorded[name] as unknown as HistoryPage;
const prompts = (w: ReturnType<typeof windowOf>) => w.items.flatMap((i) => (i.kind === "user" ? [i.text] : []));

describe("a window of a long session's turns", () => {
  it("folds a page into items, each turn group's start known, ids tagged the same for every page", () => {
    const home = windowOf(page("home"));
    expect([home.first, home.end, home.total]).toEqual([0, 4, 12]);
    expect(home.starts).toEqual([0, 3, 6, 9]);
    expect(prompts(home)[0]).toBe("Step 1: tidy the module of stage 1");
    expect(turnsIn(home.items)).toBe(4);
    expect(home.items.every((i) => i.id.startsWith("h/"))).toBe(true);
    expect(baseId("h/long-1:user")).toBe("long-1:user");
    expect(baseId("earlier-100/long-1:user")).toBe("long-1:user");
    expect(baseId("long-1:user")).toBe("long-1:user");
  });

  it("grows downwards and upwards, dropping the far end beyond its cap", () => {
    const down = withNewer(windowOf(page("home")), page("second"));
    expect([down.first, down.end, turnsIn(down.items)]).toEqual([0, 8, 8]);
    expect(down.starts[4]).toBe(12);
    const capped = withNewer(windowOf(page("home")), page("second"), 6);
    expect([capped.first, capped.end]).toEqual([2, 8]);
    expect(prompts(capped)[0]).toBe("Step 3: tidy the module of stage 3");
    expect(capped.starts[0]).toBe(0);
    const up = withOlder(windowOf(page("newest")), page("older"), 6);
    expect([up.first, up.end]).toEqual([4, 10]);
    expect(prompts(up)).toEqual([5, 6, 7, 8, 9, 10].map((n) => `Step ${n}: tidy the module of stage ${n}`));
    // A page that does not join on starts a new window.
    expect(withOlder(windowOf(page("newest")), page("home")).first).toBe(0);
    expect(withNewer(windowOf(page("home")), page("newest")).first).toBe(8);
  });

  it("finds a search hit's row and a checkpoint turn's prompt in the page that holds them", () => {
    const quokka = recorded.quokka as unknown as SessionSearch;
    const hit = quokka.hits[0];
    if (hit === undefined) throw new Error("the recorded search found the word");
    expect([hit.group, hit.turn, hit.role]).toEqual([6, 7, "assistant"]);
    expect(fromFor(hit.group, 4)).toBe(4);
    const at = windowOf(page("atTurn7"));
    expect([at.first, at.end]).toEqual([4, 8]);
    const i = indexOfId(at.items, hitItemId(hit));
    expect(at.items[i]?.kind).toBe("assistant");
    const t = indexOfTurn(at.items, 7);
    const row = at.items[t];
    expect(row?.kind === "user" && row.text).toBe("Step 7: tidy the module of stage 7");
    expect(indexOfTurn(at.items, 2)).toBe(-1);
  });
});
