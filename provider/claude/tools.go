package claude

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpTools is the provider's MCP client of the servers in --mcp-config: one
// session per server, connected on first use.
type mcpTools struct {
	servers  map[string]MCPServer
	hc       *http.Client
	proxy    string // EnvMCPProxy
	upstream string // EnvMCPUpstream
	sessions map[string]*mcp.ClientSession
}

// serverNames lists the configured servers in a stable order.
func (m *mcpTools) serverNames() []string {
	names := make([]string, 0, len(m.servers))
	for n := range m.servers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// serverFor returns the server that offers tool (the first configured server
// when none says; a scripted provider does not list tools).
func (m *mcpTools) serverFor() (string, bool) {
	names := m.serverNames()
	if len(names) == 0 {
		return "", false
	}
	return names[0], true
}

// endpoint is the URL the provider talks to: the configured one, or the
// recording proxy in its place when the configured one is the upstream the
// proxy stands for.
func (m *mcpTools) endpoint(raw string) string {
	if m.proxy == "" || m.upstream == "" {
		return raw
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host != m.upstream {
		return raw
	}
	p, err := url.Parse(m.proxy)
	if err != nil {
		return raw
	}
	u.Scheme, u.Host = p.Scheme, p.Host
	return u.String()
}

func (m *mcpTools) session(ctx context.Context, name string) (*mcp.ClientSession, error) {
	if cs := m.sessions[name]; cs != nil {
		return cs, nil
	}
	srv := m.servers[name]
	if srv.Type != "" && srv.Type != "http" {
		return nil, fmt.Errorf("MCP server %q: transport %q is not supported by the scripted provider (http only)", name, srv.Type)
	}
	hc := &http.Client{Transport: headerTransport{headers: srv.Headers, base: m.hc.Transport}}
	client := mcp.NewClient(&mcp.Implementation{Name: "claude-code", Version: Version}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: m.endpoint(srv.URL), HTTPClient: hc, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		return nil, fmt.Errorf("MCP server %q: %w", name, err)
	}
	if m.sessions == nil {
		m.sessions = map[string]*mcp.ClientSession{}
	}
	m.sessions[name] = cs
	return cs, nil
}

// call calls tool on server and returns its text content; isError reports a
// tool error (the result's isError).
func (m *mcpTools) call(ctx context.Context, server, tool string, args map[string]any) (text string, isError bool, err error) {
	cs, err := m.session(ctx, server)
	if err != nil {
		return "", true, err
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return "", true, err
	}
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n"), res.IsError, nil
}

func (m *mcpTools) close() {
	for _, cs := range m.sessions {
		_ = cs.Close()
	}
}

// headerTransport adds the configured headers (the per-session bearer token)
// to every request.
type headerTransport struct {
	headers map[string]string
	base    http.RoundTripper
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		r.Header.Set(k, v)
	}
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(r)
}

// TaskField reads a field of a tool's JSON answer ({"taskId":..., "result":...}):
// the first of names present, a string as it is and any other value as JSON;
// "" when text is not a JSON object or holds none of them. The scripted
// model reads the server's tool answers with it too.
func TaskField(text string, names ...string) string {
	var doc map[string]any
	if json.Unmarshal([]byte(text), &doc) != nil {
		return ""
	}
	for _, n := range names {
		if v, ok := doc[n]; ok && v != nil {
			if s, ok := v.(string); ok {
				return s
			}
			b, _ := json.Marshal(v)
			return string(b)
		}
	}
	return ""
}

// bashTimeout is the timeout a foreground Bash tool call asks for (the
// "timeout" of its input: 600000 ms, the most the Claude CLI allows).
const bashTimeout = 600 * time.Second

// EnvBashMaxTimeout caps a Bash tool call's timeout, in milliseconds, as the
// variable of the same name does for the Claude CLI.
const EnvBashMaxTimeout = "BASH_MAX_TIMEOUT_MS"

// toolTimeout returns how long a Bash tool call that asks for asked may run:
// asked, capped by EnvBashMaxTimeout when it is set to a positive number.
func toolTimeout(getenv func(string) string, asked time.Duration) time.Duration {
	if ms, err := strconv.ParseInt(getenv(EnvBashMaxTimeout), 10, 64); err == nil && ms > 0 {
		return min(asked, time.Duration(ms)*time.Millisecond)
	}
	return asked
}

// bashCurl runs curl as a Bash tool call with a timeout: a gate that never
// answers ends the call with the tool's timeout error instead of holding the
// provider until it is stopped.
func bashCurl(ctx context.Context, hc *http.Client, u string, timeout time.Duration) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out, err := curl(cctx, hc, u)
	if err != nil && ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) {
		return "", fmt.Errorf("Command timed out after %v", timeout)
	}
	return out, err
}

// curl fetches url as `curl --fail --silent` would: the body, or curl's error
// text for a failure.
func curl(ctx context.Context, hc *http.Client, u string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", fmt.Errorf("curl: (3) URL rejected: %v", err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return "", err
		}
		return "", fmt.Errorf("curl: (7) Failed to connect: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", fmt.Errorf("curl: (56) Failure when receiving data from the peer: %v", err)
	}
	if resp.StatusCode >= 400 {
		return "", fmt.Errorf("curl: (22) The requested URL returned error: %d", resp.StatusCode)
	}
	return string(body), nil
}
