package cliwrap

import (
	"bytes"
	"encoding/json"
	"net/url"
)

// The Codex CLI (`codex app-server`) is not given its MCP servers in argv:
// the server sends them in a JSON-RPC request's params on stdin, as T3's
// Codex adapter does in thread/start (`"config":{"mcp_servers":{"t3-code":
// {"url":...,"http_headers":{"Authorization":"Bearer ..."}}}}`). The
// wrapper rewrites such a line before passing it on, so the CLI reaches the
// MCP servers that the recording proxy stands in front of through the
// proxy; the line is tapped as the server wrote it.

// mcpServersKey is what a stdin line must hold to be looked at.
var mcpServersKey = []byte(`"mcp_servers"`)

// rewriteStdinMCP returns line with every params.config.mcp_servers.*.url
// naming the upstream host:port sent to the proxy's origin instead, or line
// itself when there is nothing to rewrite (or it is not such a message).
func rewriteStdinMCP(line []byte, proxy *url.URL, upstream string) []byte {
	if proxy == nil || !bytes.Contains(line, mcpServersKey) {
		return line
	}
	var msg map[string]json.RawMessage
	if json.Unmarshal(line, &msg) != nil {
		return line
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(msg["params"], &params) != nil || params == nil {
		return line
	}
	var config map[string]json.RawMessage
	if json.Unmarshal(params["config"], &config) != nil || config == nil {
		return line
	}
	servers, changed := rewriteServers(config["mcp_servers"], proxy, upstream)
	if !changed {
		return line
	}
	config["mcp_servers"] = servers
	params["config"], _ = json.Marshal(config)
	msg["params"], _ = json.Marshal(params)
	out, err := json.Marshal(msg)
	if err != nil {
		return line
	}
	// The line's own ending (a newline, CRLF) is kept.
	end := line[len(bytes.TrimRight(line, "\r\n")):]
	return append(out, end...)
}

// rewriteServers rewrites the URLs of an MCP server map (name → {"url": ...})
// that name upstream; it reports whether any did.
func rewriteServers(raw json.RawMessage, proxy *url.URL, upstream string) (json.RawMessage, bool) {
	var servers map[string]map[string]json.RawMessage
	if json.Unmarshal(raw, &servers) != nil || servers == nil {
		return raw, false
	}
	changed := false
	for _, s := range servers {
		var u string
		if json.Unmarshal(s["url"], &u) != nil {
			continue
		}
		p, err := url.Parse(u)
		if err != nil || p.Host != upstream {
			continue
		}
		p.Scheme, p.Host = proxy.Scheme, proxy.Host
		s["url"], _ = json.Marshal(p.String())
		changed = true
	}
	if !changed {
		return raw, false
	}
	b, err := json.Marshal(servers)
	if err != nil {
		return raw, false
	}
	return b, true
}
