package t3

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Client is a small HTTP client for the T3 orchestration server: the token
// exchange, project creation, WebSocket tickets and the HTTP thread read, plus
// DialRPC for the Effect RPC socket. It sends what the live verifier sends and
// nothing more, so a recording of it is a recording of the verifier's traffic.
//
// A Client is safe for concurrent use once Token is set; ExchangeToken sets it.
type Client struct {
	// BaseURL is the server's origin, for example http://127.0.0.1:3773.
	BaseURL string
	// HTTP performs the requests; never nil after NewClient.
	HTTP *http.Client
	// Token is the bearer access token sent with every authenticated request.
	Token string
}

// NewClient returns a client for the server at baseURL. A nil hc means a client
// of its own (not http.DefaultClient, whose settings other code may change).
func NewClient(baseURL string, hc *http.Client) *Client {
	if hc == nil {
		hc = &http.Client{}
	}
	return &Client{BaseURL: strings.TrimRight(baseURL, "/"), HTTP: hc}
}

// HTTPError is a non-2xx answer. T3 answers errors with a tagged JSON body
// ({"code":"auth_invalid","reason":"invalid_credential"}); Code and Reason are
// decoded from it when present, and Body keeps the bytes.
type HTTPError struct {
	Method string
	Path   string
	Status int
	Code   string
	Reason string
	Body   []byte
}

// Error says "t3: POST /oauth/token answered HTTP 502 ...". The client's
// messages never put a ':' or '=' right after a request's path: one ending
// in a token field's name (/oauth/token) would read as "token: value" to
// the redactor, and what follows would be redacted from the verdict.
func (e *HTTPError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "t3: %s %s answered HTTP %d", e.Method, e.Path, e.Status)
	if e.Code != "" {
		fmt.Fprintf(&b, " %s", e.Code)
	}
	if e.Reason != "" {
		fmt.Fprintf(&b, " (%s)", e.Reason)
	}
	if e.Code == "" && len(e.Body) > 0 {
		body := e.Body
		if len(body) > 200 {
			body = body[:200]
		}
		fmt.Fprintf(&b, ": %s", bytes.TrimSpace(body))
	}
	return b.String()
}

// TokenResponse is the body of a successful token exchange.
type TokenResponse struct {
	AccessToken     string `json:"access_token"`
	IssuedTokenType string `json:"issued_token_type"`
	TokenType       string `json:"token_type"`
	ExpiresIn       int64  `json:"expires_in"`
	Scope           string `json:"scope,omitempty"`
}

// TicketResponse is the body of a WebSocket ticket answer.
type TicketResponse struct {
	Ticket    string `json:"ticket"`
	ExpiresAt string `json:"expiresAt"`
}

// ExchangeToken trades the desktop bootstrap token for an access token and
// stores it in c.Token.
func (c *Client) ExchangeToken(ctx context.Context, bootstrapToken string) (string, error) {
	form := url.Values{
		"grant_type":           {TokenExchangeGrant},
		"subject_token":        {bootstrapToken},
		"subject_token_type":   {BootstrapTokenType},
		"requested_token_type": {AccessTokenType},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.BaseURL+PathToken, strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	var tok TokenResponse
	if _, err := c.do(req, &tok); err != nil {
		return "", err
	}
	if tok.AccessToken == "" {
		return "", fmt.Errorf("t3: token exchange answered no access_token")
	}
	c.Token = tok.AccessToken
	return tok.AccessToken, nil
}

// CreateProject creates a project with a fresh command id and returns the
// server's answer as it was sent.
func (c *Client) CreateProject(ctx context.Context, projectID, title, workspaceRoot string) (json.RawMessage, error) {
	body, err := json.Marshal(map[string]string{
		"type":          "project.create",
		"commandId":     NewUUID(),
		"projectId":     projectID,
		"title":         title,
		"workspaceRoot": workspaceRoot,
	})
	if err != nil {
		return nil, err
	}
	req, err := c.newRequest(ctx, http.MethodPost, PathProjectsMutate, body)
	if err != nil {
		return nil, err
	}
	var raw json.RawMessage
	if _, err := c.do(req, &raw); err != nil {
		return nil, err
	}
	return raw, nil
}

// WebSocketTicket asks for a single-use ticket for one /ws upgrade.
func (c *Client) WebSocketTicket(ctx context.Context) (string, error) {
	req, err := c.newRequest(ctx, http.MethodPost, PathWebSocketTicket, nil)
	if err != nil {
		return "", err
	}
	var t TicketResponse
	if _, err := c.do(req, &t); err != nil {
		return "", err
	}
	if t.Ticket == "" {
		return "", fmt.Errorf("t3: websocket ticket answer has no ticket")
	}
	return t.Ticket, nil
}

// ReadThread reads a thread over HTTP (the restart read). It returns the typed
// view and the body exactly as sent.
func (c *Client) ReadThread(ctx context.Context, threadID string) (*ThreadRead, json.RawMessage, error) {
	if threadID == "" {
		return nil, nil, fmt.Errorf("t3: ReadThread: empty thread id")
	}
	req, err := c.newRequest(ctx, http.MethodGet, PathThreadsPrefix+url.PathEscape(threadID), nil)
	if err != nil {
		return nil, nil, err
	}
	var raw json.RawMessage
	if _, err := c.do(req, &raw); err != nil {
		return nil, nil, err
	}
	var tr ThreadRead
	if err := json.Unmarshal(raw, &tr); err != nil {
		return nil, raw, fmt.Errorf("t3: decoding thread %s: %w", threadID, err)
	}
	return &tr, raw, nil
}

// newRequest builds an authenticated request carrying the protocol header, as
// the verifier sends on every call after the token exchange.
func (c *Client) newRequest(ctx context.Context, method, path string, body []byte) (*http.Request, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, r)
	if err != nil {
		return nil, err
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(ProtocolHeader, strconv.Itoa(ProtocolVersion))
	return req, nil
}

// maxBody bounds what the client reads from one HTTP answer.
const maxBody = 64 << 20

func (c *Client) do(req *http.Request, into any) (*http.Response, error) {
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return resp, fmt.Errorf("t3: the answer to %s %s could not be read: %w", req.Method, req.URL.Path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		he := &HTTPError{Method: req.Method, Path: req.URL.Path, Status: resp.StatusCode, Body: body}
		var tagged struct {
			Code   string `json:"code"`
			Reason string `json:"reason"`
		}
		if json.Unmarshal(body, &tagged) == nil {
			he.Code, he.Reason = tagged.Code, tagged.Reason
		}
		return resp, he
	}
	if into != nil {
		if err := json.Unmarshal(body, into); err != nil {
			return resp, fmt.Errorf("t3: the answer to %s %s is not the JSON expected: %w", req.Method, req.URL.Path, err)
		}
	}
	return resp, nil
}

// NewUUID returns a random version 4 UUID, the id format T3 uses for commands,
// projects and threads.
func NewUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
