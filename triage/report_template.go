package triage

import "html/template"

// reportTemplate is the page. Everything it needs is inline: the report is
// mailed, attached to CI runs and opened offline.
var reportTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{.Title}}</title>
<style>
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222;background:#fff}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #ccc}
pre{background:#f6f6f6;padding:.5em;overflow-x:auto;white-space:pre-wrap;word-break:break-all}
table{border-collapse:collapse;font-size:.85em;width:100%}
th,td{border:1px solid #ddd;padding:2px 5px;vertical-align:top;text-align:left}
td{font-family:ui-monospace,monospace;overflow-wrap:anywhere}
table.timeline td:nth-child(-n+3){white-space:nowrap}
th{background:#eee;position:sticky;top:0}
tr[id^="seq-"]{scroll-margin-top:3em}
td.cause{white-space:pre-wrap}
tr.fail-detail td{background:#fff0f0}
.passed{color:#176b1b}.failed{color:#b00020}.unknown{color:#8a6d00}
.notice{background:#fff3cd;border:1px solid #e0c060;padding:.5em}
tr.fail td{background:#ffd6d6;font-weight:bold}
tr.gap td{background:#f0f0f0;color:#666;font-style:italic;text-align:center}
tr:target td{outline:2px solid #b00020}
.lane-server{color:#5a3d8a}.lane-http{color:#0b5394}.lane-ws{color:#38761d}.lane-gate{color:#b45f06}.lane-marks{color:#666}
</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{if .Truncated}}<p class="notice" id="truncated">truncated: the bundle ended without a trailer ({{.TruncatedReason}}); every event before the cut is shown.</p>{{end}}

<h2 id="verdict">Verdict</h2>
<p>status: <strong class="{{.Status}}">{{.Status}}</strong> &middot; {{.Agreement}}</p>{{with .NotApplicable}}
<p class="notice" id="not-applicable">{{.}} Nothing was verified: this run neither passed nor failed.</p>{{end}}
{{if .Suites}}<table id="suites">
<tr><th>suite</th><th>status</th><th>failing check</th><th>at</th><th>message</th><th>expected</th><th>seen</th></tr>
{{range .Suites}}<tr class="suite-{{.Status}}"><td>{{.Suite}}</td><td class="{{.Status}}">{{.Status}}</td>{{with .Failure}}<td>{{.Check}}</td><td><a href="#seq-{{.Seq}}">seq {{.Seq}}</a></td><td>{{.Message}}</td><td>{{.Expected}}</td><td>{{.Seen}}</td>{{else}}<td colspan="5"></td>{{end}}</tr>
{{end}}</table>{{end}}
{{if and .Suites .Failure}}<p>the verdict's failure (the first in the order of the suites above):</p>{{end}}
{{with .Failure}}
<table>
<tr><th>check</th><td>{{.Check}}</td></tr>
<tr><th>message</th><td>{{.Message}}</td></tr>
{{if .Expected}}<tr><th>expected</th><td>{{.Expected}}</td></tr>{{end}}
{{if .Seen}}<tr><th>seen</th><td>{{.Seen}}</td></tr>{{end}}
<tr><th>at</th><td><a href="#seq-{{.Seq}}">seq {{.Seq}}</a> &middot; {{$.FailureAt}}</td></tr>
{{if .ThreadID}}<tr><th>thread</th><td>{{.ThreadID}}</td></tr>{{end}}
{{if .RunID}}<tr><th>run</th><td>{{.RunID}}</td></tr>{{end}}
</table>
{{if .Diff}}<p>diff (-want +got):</p><pre class="diff">{{.Diff}}</pre>{{end}}
{{end}}
{{if .VerdictDiff}}<p>recorded vs replayed (-recorded +replayed):</p><pre class="diff">{{.VerdictDiff}}</pre>{{end}}
{{if .Milestones}}<details><summary>milestones</summary><pre>{{.Milestones}}</pre></details>{{end}}
{{if .Recorded}}<details><summary>recorded verdict</summary><pre>{{.Recorded}}</pre></details>{{end}}
{{if .Replayed}}<details><summary>replayed verdict</summary><pre>{{.Replayed}}</pre></details>{{end}}
{{if .DecodeErrors}}<details open><summary>decode errors</summary><pre>{{range .DecodeErrors}}{{.}}
{{end}}</pre></details>{{end}}

{{if or .Flags .FirstBad}}<h2 id="flags">Flags ({{len .Flags}})</h2>
{{with .FirstBad}}<p id="first-bad">first bad state: <a href="#seq-{{.Seq}}">seq {{.Seq}}</a> ({{.Source}}), from where {{.Check}} already saw the value it failed with at <a href="#seq-{{.Decided}}">seq {{.Decided}}</a></p>{{end}}
{{if .Flags}}<table id="flag-list">
<tr><th>seq</th><th>t</th><th>flag</th><th>conn</th><th>what</th></tr>
{{range .Flags}}<tr class="flag-{{.Kind}}"><td><a href="#seq-{{.Seq}}">{{.Seq}}</a></td><td>{{.T}}</td><td>{{.Kind}}</td><td>{{.Conn}}</td><td>{{.What}}</td></tr>
{{end}}</table>{{end}}{{end}}

<h2 id="manifest">Manifest</h2>
<table>{{range .Manifest}}<tr><th>{{.Key}}</th><td>{{.Value}}</td></tr>{{end}}</table>

<h2 id="timeline">Timeline ({{.Events}} events)</h2>
<table class="timeline">
<tr><th>seq</th><th>t</th><th>kind</th>{{range .Lanes}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}{{if .Gap}}<tr class="gap"><td colspan="{{$.Colspan}}">{{.Gap}}</td></tr>
{{else}}<tr id="seq-{{.Seq}}"{{if .Fail}} class="fail"{{end}}><td><a href="#seq-{{.Seq}}">{{.Seq}}</a></td><td>{{.T}}</td><td>{{.Kind}}</td>{{range $i, $c := .Cells}}<td class="lane-{{index $.Lanes $i}}">{{$c}}</td>{{end}}</tr>
{{if and .Fail $.FailingEvent}}<tr class="fail-detail"><td colspan="{{$.Colspan}}"><details><summary>seq {{.Seq}} in full</summary><pre>{{$.FailingEvent}}</pre></details></td></tr>
{{end}}{{end}}{{end}}</table>

<h2 id="rpc">RPC calls</h2>
{{if .Calls}}<table>
<tr><th>conn</th><th>id</th><th>method</th><th>thread</th><th>request</th><th>end</th><th>duration</th><th>chunks</th><th>acks</th><th>outcome</th><th>cause</th></tr>
{{range .Calls}}<tr><td>{{.Conn}}</td><td>{{.ID}}</td><td>{{.Method}}{{if .Payload}}<details><summary>payload</summary><pre>{{.Payload}}</pre></details>{{end}}</td><td>{{.Thread}}</td><td><a href="#seq-{{.Seq}}">{{.Seq}}</a></td><td>{{if .Ended}}<a href="#seq-{{.EndSeq}}">{{.EndSeq}}</a>{{end}}</td><td>{{.Duration}}</td><td>{{.Chunks}}</td><td>{{.Acks}}</td><td class="{{.Outcome}}">{{.Outcome}}</td><td class="cause">{{.Detail}}</td></tr>
{{end}}</table>{{else}}<p>no RPC calls</p>{{end}}

<h2 id="http">HTTP exchanges</h2>
{{if .HTTP}}<table>
<tr><th>conn</th><th>request</th><th>status</th><th>duration</th><th>bodies</th></tr>
{{range .HTTP}}<tr><td>{{.Conn}}</td><td><a href="#seq-{{.Seq}}">{{.Method}} {{.URL}}</a></td><td>{{.Status}}</td><td>{{.Duration}}</td><td>{{if .Request}}<details><summary>request body</summary><pre>{{.Request}}</pre></details>{{end}}{{if .Response}}<details><summary>response body</summary><pre>{{.Response}}</pre></details>{{end}}</td></tr>
{{end}}</table>{{else}}<p>no HTTP exchanges</p>{{end}}

<h2 id="projection">Last projection of the parent thread</h2>
{{with .Parent}}<p>thread {{.Thread}}, seen at <a href="#seq-{{.Seq}}">seq {{.Seq}}</a> ({{.T}}) in {{.Source}}</p>
<details><summary>projection</summary><pre>{{.JSON}}</pre></details>{{else}}<p>no projection of the parent thread was seen</p>{{end}}

<h2 id="log">Server log</h2>
{{if .Logs}}<table>
<tr><th>seq</th><th>t</th><th>stream</th><th>line</th></tr>
{{range .Logs}}<tr><td><a href="#seq-{{.Seq}}">{{.Seq}}</a></td><td>{{.T}}</td><td>{{.Stream}}</td><td>{{.Text}}</td></tr>
{{end}}</table>{{else}}<p>no log lines</p>{{end}}

{{if .Artifacts}}<h2 id="artifacts">Artifacts</h2>
{{range .Artifacts}}<details><summary>{{.Name}} (seq {{.Seq}})</summary><pre>{{.Text}}</pre></details>
{{end}}{{end}}
</body>
</html>
`))
