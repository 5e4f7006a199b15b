// Package view is wireproof's interactive evidence viewer: a local web server
// whose pages (embedded, no network) show a corpus of bundles, one bundle as
// a trace (a time-scaled waterfall per channel, a virtualised event list,
// details of any event or RPC call, the parent thread's projection at any
// moment) and two bundles' stories side by side.
//
// Every verdict it shows comes from the code path of `wireproof replay`
// (replay.ReplayFile for corpus rows; a replay.Session fed by the same read
// that indexes a bundle for its page), and every story diff from
// triage.Diff, so the viewer never tells a different story than the CLI.
//
// # JSON API
//
// The pages read the same small API scripts can use; every answer is JSON.
//
//	GET /api/bundles                     the corpus: one row per bundle, flake rates
//	GET /api/bundle/{id}                 verdict, manifest, spans, error flags, observations
//	GET /api/bundle/{id}/events?from=&limit=&kind=&conn=&method=&status=&outcome=&q=&around=SEQ
//	                                     a window of the (filtered) event list; q is a
//	                                     filter expression (docs/filter.md), 400 when it
//	                                     does not parse
//	GET /api/filter?q=EXPR               whether q parses: {ok} or {error, column, expected}
//	GET /api/bundle/{id}/event/{seq}     one event in full (payload capped at 256 KiB)
//	GET /api/bundle/{id}/call/{n}        one RPC call: payload, chunks, exit, cause
//	GET /api/bundle/{id}/projection?seq=N|obs=I
//	                                     the parent thread as replay saw it then
//	GET /api/diff?a=ID&b=ID              two stories aligned, as `wireproof diff`
//
// Memory stays bounded: an opened bundle is held as summaries and spans (a
// few hundred bytes per event), payloads are read from the file when asked
// for, and only Options.Cache bundles stay open.
package view
