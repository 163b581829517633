#!/bin/sh
# The conformance suite's client: `cairn` (the binary in $CAIRN_BIN) with a private home, given
# the scenario's server URL ($1). It adds the server, logs in with the browser step driven over
# HTTP (`--browser http`), then starts it and lists its tools (`cairn mcp test`), and calls the
# scenario server's tool (`cairn mcp call`, which logs in again for more scopes when a call is
# refused for a missing one: a step-up, and accepts a form the server asks for with its
# defaults, as a user pressing Enter at each field would). A
# pre-registered client comes from $MCP_CONFORMANCE_CONTEXT, as a user gives one on the command
# line (`--client-id`, the secret through an environment variable).
set -u
URL="$1"
D=$(mktemp -d)
mkdir -p "$D/ws"
export HOME="$D" XDG_CONFIG_HOME="$D/config" XDG_DATA_HOME="$D/data" CAIRN_KEYSTORE=memory \
  CAIRN_MCP_CONFIG="$D/mcp.json"
set --
if [ -n "${MCP_CONFORMANCE_CONTEXT:-}" ]; then
  field() { node -e "process.stdout.write(JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT)['$1'] || '')"; }
  ID=$(field client_id)
  CONFORMANCE_CLIENT_SECRET=$(field client_secret)
  export CONFORMANCE_CLIENT_SECRET
  [ -n "$ID" ] && set -- --client-id "$ID"
  [ -n "$ID" ] && [ -n "$CONFORMANCE_CLIENT_SECRET" ] && set -- "$@" --client-secret-env CONFORMANCE_CLIENT_SECRET
fi
"$CAIRN_BIN" mcp add --user conformance --url "$URL" -w "$D/ws" >&2 || exit 1
"$CAIRN_BIN" mcp login conformance --browser http -w "$D/ws" "$@" || exit 1
"$CAIRN_BIN" mcp test conformance -w "$D/ws" >"$D/tools.txt"
status=$?
cat "$D/tools.txt"
# The tool each scenario's server expects a call of ($MCP_CONFORMANCE_SCENARIO names it).
case "${MCP_CONFORMANCE_SCENARIO:-}" in
  tools_call) TOOL=add_numbers ARGS='{"a": 2, "b": 3}' ;;
  sse-retry) TOOL=test_reconnection ARGS='{}' ;;
  elicitation-sep1034-client-defaults) TOOL=test_client_elicitation_defaults ARGS='{}' ;;
  *) TOOL=test-tool ARGS='{}' ;;
esac
if [ $status -eq 0 ] && grep -q "^  $TOOL\$" "$D/tools.txt"; then
  "$CAIRN_BIN" mcp call conformance "$TOOL" "$ARGS" --browser http --elicit accept-defaults -w "$D/ws"
  status=$?
fi
rm -rf "$D"
exit $status
