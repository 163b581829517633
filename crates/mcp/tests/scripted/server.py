#!/usr/bin/env python3
"""A scripted stdio MCP server for malformed-reply tests: `server.py MODE`.

Modes: bad-tools (valid and malformed tool entries), bad-result (`tools` is not a list),
paged (two pages, the second with a malformed entry), noisy-exit (25 stderr lines with
escape codes, then exit 3), quiet-exit (exit 3, nothing on stderr).
"""
import json
import sys

MODE = sys.argv[1] if len(sys.argv) > 1 else "bad-tools"
SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}}


def log(msg):
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def tools_page(cursor):
    if MODE == "bad-result":
        return {"tools": "not a list"}
    if MODE == "paged":
        if cursor is None:
            return {"tools": [{"name": "first", "inputSchema": SCHEMA}], "nextCursor": "p2"}
        return {"tools": [{"name": "second"}, {"name": 7}]}
    return {
        "tools": [
            {"name": "echo", "description": "Echoes.", "inputSchema": SCHEMA},
            {"name": "no_schema", "description": "Takes nothing."},
            {"name": "null_schema", "inputSchema": None},
            {"name": "string_schema", "inputSchema": "object"},
            {"description": "no name at all", "inputSchema": SCHEMA},
            42,
            {"name": "odd_fields", "inputSchema": SCHEMA, "annotations": "loud", "icons": 3},
        ]
    }


if MODE == "noisy-exit":
    for i in range(25):
        log("\x1b[31mline %d\x1b[0m\x07" % i)
    log("FATAL: \x1b[1mTEST_TOKEN\x1b[0m is not set")
    sys.exit(3)
if MODE == "quiet-exit":
    sys.exit(3)

for raw in sys.stdin:
    try:
        msg = json.loads(raw)
    except ValueError:
        continue
    method = msg.get("method")
    log("got %s" % method)
    if "id" not in msg or method is None:
        continue
    rid = msg["id"]
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": rid, "result": {
            "protocolVersion": msg["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "scripted", "version": "1"},
        }})
    elif method == "tools/list":
        cursor = (msg.get("params") or {}).get("cursor")
        send({"jsonrpc": "2.0", "id": rid, "result": tools_page(cursor)})
    elif method == "tools/call":
        name = msg["params"]["name"]
        send({"jsonrpc": "2.0", "id": rid, "result": {
            "content": [{"type": "text", "text": "called " + name}]}})
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": rid, "result": {}})
    else:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no " + method}})
