// The real Claude Agent SDK driving wireproof's scripted provider.
//
//   node client.mjs PROVIDER_EXECUTABLE GATE_URL
//
// PROVIDER_EXECUTABLE is an executable that runs `wireproof provider claude`
// with the arguments it is given (the SDK spawns it as it spawns the Claude
// CLI, through pathToClaudeCodeExecutable). A test MCP server built on the
// official TypeScript MCP SDK (Streamable HTTP on 127.0.0.1, stateless, with
// the orchestration server's delegate_task and task_status) stands where the
// orchestration server's /mcp would, behind a bearer token.
//
// The SDK runs in streaming-input mode, as an orchestration server runs it:
// the live verifier's idle prompt first (the provider calls delegate_task
// over MCP and ends its turn with PARENT_RELEASED), then, once that turn's
// result has arrived, the completion wake (task_status over MCP, then
// ACK:<result>). It prints one JSON line with what it saw and exits 0, or
// prints the error and exits 1.
import http from "node:http";
import { query } from "@anthropic-ai/claude-agent-sdk";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

const [providerPath, gateURL] = process.argv.slice(2);
if (!providerPath || !gateURL) {
  console.error("usage: node client.mjs PROVIDER_EXECUTABLE GATE_URL");
  process.exit(2);
}
const token = "interop-" + Math.random().toString(36).slice(2);
const secret = "RESULT_interop";
const calls = [];

function toolServer() {
  const s = new McpServer({ name: "t3-code", version: "interop" });
  s.registerTool(
    "delegate_task",
    { description: "Delegate a task to a child thread.", inputSchema: { task: z.string(), mode: z.string().optional() } },
    async ({ task, mode }) => {
      calls.push({ tool: "delegate_task", mode: mode ?? "", task });
      return { content: [{ type: "text", text: JSON.stringify({ taskId: "task-1", childThreadId: "child-1", status: "running" }) }] };
    },
  );
  s.registerTool(
    "task_status",
    { description: "Read a delegated task.", inputSchema: { taskId: z.string() } },
    async ({ taskId }) => {
      calls.push({ tool: "task_status", taskId });
      return { content: [{ type: "text", text: JSON.stringify({ taskId, status: "completed", result: secret }) }] };
    },
  );
  return s;
}

const httpServer = http.createServer(async (req, res) => {
  if (req.url !== "/mcp" || req.headers.authorization !== "Bearer " + token) {
    res.writeHead(401).end();
    return;
  }
  const server = toolServer();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on("close", () => {
    transport.close();
    server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res);
});
await new Promise((resolve) => httpServer.listen(0, "127.0.0.1", resolve));
const mcpURL = `http://127.0.0.1:${httpServer.address().port}/mcp`;

const prompt =
  "This is a live background-delivery verification. Use T3 delegate_task with mode=async to create exactly one child using provider claudeAgent, model claude-sonnet-4-6. " +
  `Give the child this task: Run curl --fail --silent ${gateURL} with a terminal tool timeout of 600000 milliseconds and return exactly the response as your final answer. Do not read other files. Do not retry failures. ` +
  "The background HTTP request will wait until you end your initial turn. Immediately end your turn with exactly PARENT_RELEASED. Do not wait or poll, and do not call any more tools in this turn. " +
  "When the completion notification arrives, use task_status to read the child result and reply with exactly ACK: followed by that result with no space after the colon. Do not guess the result or run the background command yourself.";
const wake = "Delegated task task-1 completed. Use task_status with taskId task-1 to read the result.";

const results = [];
let turnEnded;
const nextResult = () => new Promise((resolve) => (turnEnded = resolve));
function user(text) {
  return { type: "user", message: { role: "user", content: text }, parent_tool_use_id: null, session_id: "" };
}
async function* messages() {
  let ended = nextResult();
  yield user(prompt);
  await ended;
  ended = nextResult();
  yield user(wake);
  await ended;
}

const seen = { init: null, toolUses: [], toolResults: [], texts: [], results: [] };
try {
  for await (const m of query({
    prompt: messages(),
    options: {
      pathToClaudeCodeExecutable: providerPath,
      mcpServers: { "t3-code": { type: "http", url: mcpURL, headers: { Authorization: "Bearer " + token } } },
      mcpServersDelivery: "argv",
      model: "claude-sonnet-4-6",
      permissionMode: "bypassPermissions",
      allowDangerouslySkipPermissions: true,
      settingSources: [],
      stderr: (d) => process.stderr.write(d),
    },
  })) {
    if (m.type === "system" && m.subtype === "init") {
      seen.init = { model: m.model, mcpServers: m.mcp_servers, tools: m.tools };
    } else if (m.type === "assistant") {
      for (const b of m.message.content) {
        if (b.type === "tool_use") seen.toolUses.push(b.name);
        if (b.type === "text") seen.texts.push(b.text);
      }
    } else if (m.type === "user" && Array.isArray(m.message?.content)) {
      for (const b of m.message.content) if (b.type === "tool_result") seen.toolResults.push(typeof b.content === "string" ? b.content : JSON.stringify(b.content));
    } else if (m.type === "result") {
      seen.results.push({ subtype: m.subtype, isError: m.is_error, result: m.result });
      turnEnded?.();
    }
  }
  console.log(JSON.stringify({ ...seen, mcpCalls: calls }));
  httpServer.close();
  process.exit(0);
} catch (err) {
  console.error("client:", err?.stack ?? err);
  httpServer.close();
  process.exit(1);
}
