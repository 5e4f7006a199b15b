// Package model is wireproof's scripted model: an Anthropic Messages API on
// loopback (`wireproof model`) that a real Claude CLI runs against offline,
// so that only the model is scripted and everything else (the CLI's tools,
// its MCP client, its background tasks, its stream-json) is the real thing.
//
// Respond plays the live verifier's scenarios (idle, active, native,
// nested) one level below the scripted provider (provider/claude): as a
// pure function of each request, as a model would. The latest instruction
// (the last user turn that says something, less the CLI's
// <system-reminder> sections) picks the plan; the tool calls since then and
// their results pick the step; tool names come from the request's tools.
// Handler serves it over HTTP (streamed with the API's event grammar, or
// not; count_tokens; errors in the API's shape) and Start runs it on a
// listener. Faults lists the fault modes, each failing a named check.
// docs/model.md describes the plans.
package model
