package model

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/wireproof/wireproof/model/openai"
)

// ResponsesPath is the OpenAI Responses API's path (the Codex CLI's
// base_url ends in /v1).
const ResponsesPath = "/v1/responses"

// MalformedResponsesData is the data of the event FaultMalformedEvent
// sends on the Responses API: a delta cut short, not JSON.
const MalformedResponsesData = `{"type":"response.output_text.delta","output_index":0,"delta":`

// ParseResponsesRequest reads a Responses request body and validates what
// the API requires (a model, an input), answering a bad one with an
// invalid_request_error naming the field.
func ParseResponsesRequest(body []byte) (*openai.Request, *openai.APIError) {
	var req openai.Request
	if err := json.Unmarshal(body, &req); err != nil {
		be := describeJSONError(err, body, openaiPath)
		e := openai.NewError(http.StatusBadRequest, openai.ErrInvalidRequest, be.Message, be.Param)
		if be.Param != "" {
			code := "invalid_type"
			e.Body.Code = &code
		}
		return nil, e
	}
	switch {
	case req.Model == "":
		return nil, openai.NewError(http.StatusBadRequest, openai.ErrInvalidRequest, "Missing required parameter: 'model'.", "model")
	case len(req.Input) == 0:
		return nil, openai.NewError(http.StatusBadRequest, openai.ErrInvalidRequest, "Missing required parameter: 'input'.", "input")
	}
	for i, it := range req.Input {
		switch it.Type {
		case openai.ItemFunctionCall, openai.ItemFunctionCallOutput:
			if it.CallID == "" {
				return nil, openai.NewError(http.StatusBadRequest, openai.ErrInvalidRequest, fmt.Sprintf("Missing required parameter: 'input[%d].call_id'.", i), fmt.Sprintf("input[%d].call_id", i))
			}
		case "":
			if it.Role == "" {
				return nil, openai.NewError(http.StatusBadRequest, openai.ErrInvalidRequest, fmt.Sprintf("Missing required parameter: 'input[%d].type'.", i), fmt.Sprintf("input[%d].type", i))
			}
		}
	}
	return &req, nil
}

// CodexResponse is the answer to req for item (a message or a function
// call): its ids are a pure function of the request's bytes, as Message's
// are.
func CodexResponse(req *openai.Request, item openai.Item, body []byte) *openai.Response {
	sum := sha256.Sum256(body)
	h := hex.EncodeToString(sum[:])
	resp := &openai.Response{ID: "resp_wp" + h[:22], Object: "response", Status: openai.StatusCompleted, Model: req.Model}
	switch item.Type {
	case openai.ItemFunctionCall:
		item.ID, item.CallID = "fc_wp"+h[22:44], "call_wp"+h[22:44]
	default:
		item.ID = "msg_wp" + h[22:44]
	}
	resp.Output = []openai.Item{item}
	n := len(item.Arguments) + len(item.Content.Text())
	resp.Usage = &openai.Usage{InputTokens: tokens(len(body)), OutputTokens: tokens(n)}
	resp.Usage.TotalTokens = resp.Usage.InputTokens + resp.Usage.OutputTokens
	return resp
}

// serveResponses answers POST /v1/responses.
func (h *Handler) serveResponses(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("x-request-id", "req_wireproof")
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		openai.WriteError(w, openai.NewError(http.StatusMethodNotAllowed, openai.ErrInvalidRequest, "Method "+r.Method+" is not allowed on "+r.URL.Path+"; use POST", ""))
		return
	}
	if r.Header.Get("Authorization") == "" {
		openai.WriteError(w, openai.NewError(http.StatusUnauthorized, openai.ErrAuthentication, "You didn't provide an API key: an Authorization header (Bearer) is required.", ""))
		return
	}
	body, err := ReadBody(r)
	var large *BodyTooLargeError
	switch {
	case errors.As(err, &large):
		openai.WriteError(w, openai.NewError(http.StatusRequestEntityTooLarge, openai.ErrInvalidRequest, large.Error(), ""))
		return
	case err != nil:
		openai.WriteError(w, openai.NewError(http.StatusBadRequest, openai.ErrInvalidRequest, "reading the request body: "+err.Error(), ""))
		return
	}
	req, aerr := ParseResponsesRequest(body)
	if aerr != nil {
		openai.WriteError(w, aerr)
		return
	}
	turn, item := RespondCodex(req)
	fault := ""
	if turn.First && h.o.Fault != "" && h.struck.CompareAndSwap(false, true) {
		fault = h.o.Fault
	}
	if fault == FaultUnknownTool {
		args, _ := json.Marshal(map[string]any{"reason": "fault " + FaultUnknownTool})
		item = openai.Item{Type: openai.ItemFunctionCall, Status: openai.StatusCompleted, Name: UnknownTool, Arguments: string(args)}
	}
	h.logf("model: responses %s/%s%s (%d items, %d tools)", turn.Plan, turn.Step, faultNote(fault), len(req.Input), len(req.Functions()))
	if fault == FaultOverloaded {
		e := openai.NewError(http.StatusServiceUnavailable, openai.ErrServer, "The server is overloaded. Please retry your request.", "")
		e.RetryAfter = 1
		openai.WriteError(w, e)
		return
	}
	resp := CodexResponse(req, item, body)
	if !req.Stream {
		writeJSON(w, resp)
		return
	}
	startStream(w)
	sw := openai.NewStreamWriter(w)
	for _, ev := range openai.Events(resp, nil) {
		delta := ev.Type == openai.EventOutputTextDelta || ev.Type == openai.EventArgumentsDelta
		switch {
		case fault == FaultMalformedEvent && delta:
			_ = sw.WriteRaw(ev.Type, []byte(MalformedResponsesData))
			fault = ""
			continue
		case fault == FaultStreamCut && delta:
			_ = sw.Write(ev)
			cut(w)
			return
		}
		if sw.Write(ev) != nil {
			return
		}
	}
}
