// Package claude is a scripted stand-in for the Claude CLI, the provider
// process an orchestration server starts per session (`wireproof provider
// claude`). It speaks the CLI's stream-json protocol on stdin and stdout (the
// initialize control request answered with an account, system/init, assistant
// text and tool_use, user tool_result, result), is an MCP client of the
// servers in --mcp-config (the official Go MCP SDK, Streamable HTTP), and
// plays the live verifier's scenarios from the messages it is given:
//
//   - a root prompt with a child task (idle, nested): delegate_task mode=async,
//     then PARENT_RELEASED; active: delegate, then the foreground /parent gate
//     request as a Bash call, and the completion inside the same turn;
//   - a delegated task: the gate request itself, shown as a Bash tool call,
//     its output as the final answer (or, nested, a delegation to a grandchild);
//   - native: its own background Bash task (task_started, task_notification,
//     then an automatic turn whose result has origin task-notification);
//   - a completion wake (recognised by its taskId): task_status, then
//     ACK:<result> (a nested child answers the bare result).
//
// Anything else gets a short canned reply and a result, and a line on stderr
// saying what was not understood. Recognition is a pure function of the text
// (ParsePrompt). The process makes its HTTP requests itself and starts no
// process, so it leaves nothing behind; it ends on stdin's EOF or SIGTERM.
//
// Evidence: with EnvTap set it streams its argv and every stdin and stdout
// line to the recorder's tap endpoint; with EnvMCPProxy and EnvMCPUpstream
// set its MCP requests go through the recording proxy. EnvFault selects a
// provider fault mode (Faults).
package claude
