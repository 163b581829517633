// A small ACP client on the official TypeScript SDK (@agentclientprotocol/sdk, the client
// library Zed's ACP support shares), for what acpx does not exercise. It starts the agent
// command given after `--`, runs one scenario and prints one JSON object:
// {result, updates, permissions, reads}.
//
//   node sdk_client.mjs load CWD SESSION -- cairn acp …   session/load, history replayed
//   node sdk_client.mjs buffer CWD TEXT -- cairn acp …     new session, one prompt, the
//                                                          client serves fs/read_text_file
//                                                          with TEXT (an unsaved buffer),
//                                                          then `/undo`; notes.txt is read
//                                                          from disk after each
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const sep = process.argv.indexOf("--");
const [scenario, cwd, arg] = process.argv.slice(2, sep);
const command = process.argv.slice(sep + 1);
const child = spawn(command[0], command.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));

const updates = [];
const permissions = [];
const reads = [];
const app = acp
  .client({ name: "cairn-e2e" })
  .onNotification("session/update", ({ params }) => {
    updates.push(params.update);
  })
  .onRequest("session/request_permission", ({ params }) => {
    permissions.push(params);
    return { outcome: { outcome: "selected", optionId: "allow_once" } };
  })
  .onRequest("fs/read_text_file", ({ params }) => {
    reads.push(params.path);
    return { content: arg };
  });

const result = await app.connectWith(stream, async (ctx) => {
  const fs = { readTextFile: scenario === "buffer", writeTextFile: false };
  const init = await ctx.request("initialize", {
    protocolVersion: 1,
    clientCapabilities: { fs, terminal: false },
    clientInfo: { name: "cairn-e2e", version: "1" },
  });
  if (scenario === "load") {
    const loaded = await ctx.request("session/load", { sessionId: arg, cwd, mcpServers: [] });
    return { init, loaded };
  }
  if (scenario === "buffer") {
    const session = await ctx.request("session/new", { cwd, mcpServers: [] });
    await ctx.request("session/set_mode", { sessionId: session.sessionId, modeId: "auto" });
    const prompt = await ctx.request("session/prompt", {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "edit the buffer" }],
    });
    const afterWrite = readFileSync(join(cwd, "notes.txt"), "utf8");
    const undo = await ctx.request("session/prompt", {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "/undo" }],
    });
    const afterUndo = readFileSync(join(cwd, "notes.txt"), "utf8");
    return { init, session, prompt, afterWrite, undo, afterUndo };
  }
  throw new Error(`unknown scenario ${scenario}`);
});
child.stdin.end();
await new Promise((resolve) => child.on("exit", resolve));
console.log(JSON.stringify({ result, updates, permissions, reads, exitCode: child.exitCode }));
