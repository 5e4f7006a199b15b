// Package playback serves a bundle's recorded server side back to a live
// client: every HTTP exchange and WebSocket connection the bundle holds,
// matched to the client's requests as they come.
//
// HTTP requests are matched by method, path, query and body (JSON compared
// semantically); identical requests are served in recorded order, and a
// streamed body or server-sent events are re-sent chunk by chunk with the
// recorded gaps, scaled or at once (Timing). WebSocket connections are matched
// by path. On an Effect RPC connection (json or ndjson serialization) or a
// JSON-RPC 2.0 one, each client Request is matched to a recorded one by its
// method and normalised payload and answered with the recorded replies under
// the client's request id; a stream's chunks wait for the client's Acks, Pings
// are answered, an Interrupt is answered as recorded, and messages the server
// sent on its own keep their order and gaps relative to what caused them. Any
// other protocol is played message by message in recorded order.
//
// Ids the client makes differ from run to run: wherever a recorded request
// and the client's differ only by ids (UUIDs anywhere, any value of a field
// named id or ...Id), the pair is learned, consistently and one to one, and
// every reply carries the client's ids instead of the recorded ones. Loopback
// ports and timestamps are ignored when matching, and a recorded credential
// ([REDACTED]) matches any value.
//
// A request that matches nothing is answered with an error that names the
// closest recorded candidate and how it differs (404 for HTTP, a Die for an
// Effect request, a JSON-RPC error), and is kept in the Report with every
// recorded request that was never played.
package playback
