// SPDX-License-Identifier: Apache-2.0
// The official MCP TypeScript SDK's client against ssebench-mcp: connect (initialize and the
// initialized notification), list the tools, call test_patch, and print what it saw as one
// JSON line. Usage: node sdk-client.mjs http://127.0.0.1:PORT/mcp
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const transport = new StreamableHTTPClientTransport(new URL(process.argv[2]));
const client = new Client({ name: "ssebench-sdk-test", version: "1.0.0" });
await client.connect(transport);
const tools = await client.listTools();
const result = await client.callTool({ name: "test_patch", arguments: {} }, undefined, {
  timeout: 600000,
});
let unknown = null;
try {
  await client.callTool({ name: "no_such_tool", arguments: {} });
} catch (e) {
  unknown = e.code ?? String(e);
}
console.log(
  JSON.stringify({
    server: client.getServerVersion(),
    protocol: transport.protocolVersion ?? null,
    session: transport.sessionId ?? null,
    tools: tools.tools.map((t) => t.name),
    isError: result.isError ?? false,
    text: result.content.map((c) => c.text).join(""),
    unknown,
  }),
);
await client.close();
