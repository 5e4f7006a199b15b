package openai

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// Error types of the API.
const (
	ErrInvalidRequest = "invalid_request_error"
	ErrAuthentication = "authentication_error"
	ErrNotFound       = "not_found_error"
	ErrRateLimit      = "rate_limit_error"
	ErrServer         = "server_error"
)

// ErrorBody is the error object: {"message":...,"type":...,"param":...,"code":...}.
type ErrorBody struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// ErrorResponse is an error answer: {"error":{...}}.
type ErrorResponse struct {
	Error ErrorBody `json:"error"`
}

// APIError is an error to answer with its HTTP status.
type APIError struct {
	Status int
	Body   ErrorBody
	// RetryAfter, when positive, is sent as Retry-After (seconds).
	RetryAfter int
}

func (e *APIError) Error() string { return e.Body.Type + ": " + e.Body.Message }

// NewError returns an error of status with the API's type for it and
// message; param names the request field at fault ("" for none).
func NewError(status int, errType, message, param string) *APIError {
	e := &APIError{Status: status, Body: ErrorBody{Type: errType, Message: message}}
	if param != "" {
		e.Body.Param = &param
	}
	return e
}

// WriteError answers e in the API's shape.
func WriteError(w http.ResponseWriter, e *APIError) {
	b, _ := json.Marshal(ErrorResponse{Error: e.Body})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	w.WriteHeader(e.Status)
	_, _ = w.Write(b)
}

// ParseError reads an error answer's body (nil if it is not one).
func ParseError(body []byte) *ErrorBody {
	var e struct {
		Error *ErrorBody `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || e.Error == nil || (e.Error.Message == "" && e.Error.Type == "") {
		return nil
	}
	return e.Error
}
