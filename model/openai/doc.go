// Package openai holds the wire types of the OpenAI Responses API as the
// Codex CLI speaks it (POST /v1/responses, streamed as server-sent
// events): the request (input items, tools, namespaces of MCP tools), the
// response and its output items, the stream's events, writing a stream
// (Events, StreamWriter), reading one back (Assembler, naming each break
// of the event grammar), and errors in the API's shape.
package openai
