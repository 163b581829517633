import { describe, expect, it } from "vitest";
import { contentOf, fieldsOf, secretLike } from "./components/ElicitationCard";

const schema = {
  type: "object",
  required: ["name"],
  properties: {
    name: { type: "string", title: "Full name" },
    age: { type: "integer", default: 30 },
    ok: { type: "boolean", default: true },
    hero: { type: "string", oneOf: [{ const: "h1", title: "Superman" }], default: "h1" },
    pet: { type: "string", enum: ["p1", "p2"], enumNames: ["Cats", "Dogs"] },
    fish: { type: "array", items: { anyOf: [{ const: "f1", title: "Tuna" }] }, default: ["f1"] },
    api_token: { type: "string" },
  },
};

describe("an MCP server's form", () => {
  it("reads fields, choices and defaults from the requested schema", () => {
    const fields = fieldsOf(schema);
    const by = (n: string) => fields.find((f) => f.name === n);
    expect(by("name")).toMatchObject({ label: "Full name", required: true, kind: "string", initial: "" });
    expect(by("age")).toMatchObject({ kind: "integer", initial: "30" });
    expect(by("hero")?.choices).toEqual([{ value: "h1", label: "Superman" }]);
    expect(by("pet")?.choices).toEqual([
      { value: "p1", label: "Cats" },
      { value: "p2", label: "Dogs" },
    ]);
    expect(by("fish")).toMatchObject({ kind: "multi", initial: ["f1"] });
    expect(secretLike(by("api_token")!)).toBe(true);
    expect(secretLike(by("name")!)).toBe(false);
  });

  it("answers with typed values, leaves empty fields out and names missing required ones", () => {
    const fields = fieldsOf(schema);
    expect(contentOf(fields, {}).missing).toEqual(["Full name"]);
    const { content, missing } = contentOf(fields, { name: "Ada", age: "41" });
    expect(missing).toEqual([]);
    expect(content).toEqual({ name: "Ada", age: 41, ok: true, hero: "h1", fish: ["f1"] });
  });
});
