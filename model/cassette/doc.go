// Package cassette plays recorded model exchanges back to a live client:
// the Anthropic Messages calls, or the OpenAI Responses calls of the Codex
// CLI (connections model-h1, model-h2, ...), that a `verify --provider-cli`
// bundle holds become a cassette, and a live request is answered with the
// recorded answer of the recorded request it matches.
//
// A live request matches a recorded one by the conversation's structure:
// its model, its tools' names and its messages (roles, block types, texts,
// tool inputs and results), every string compared with its run-bound
// values set apart (UUIDs, loopback ports, temporary directories, RFC 3339
// timestamps, message and tool_use ids; for a Responses request its item
// and call ids, Codex's exec session numbers and wall times). Each run-bound value of the
// recorded request is bound to the live value at the same place, and the
// bindings are applied to the recorded answer: a tool input that named the
// recorded gate URL names this run's, a text that repeated a recorded id
// (the gate's secret, a task id) repeats the one the live conversation
// carries. A request that matches nothing gets an API error and a Miss
// naming the nearest recorded request and the first field that differs.
package cassette
