// Package anthropic holds the wire types of Anthropic's Messages API as the
// Claude CLI speaks it (a request, its messages and content blocks, tools, a
// response message, usage, the error shape), the server-sent event grammar
// of a streamed answer (StreamWriter writes it, Assembler reads it back into
// one message and names every way a stream breaks it), and a splitter of an
// event-stream body (ReadEvents).
//
// It is what both sides of wireproof's model share: the scripted model
// (package model) writes answers with it, and the protocol decoder reads
// recorded model calls with it. It imports nothing of wireproof.
package anthropic
