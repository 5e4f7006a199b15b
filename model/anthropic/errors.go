package anthropic

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// Error types of the API, each with the status it is answered with.
const (
	ErrInvalidRequest   = "invalid_request_error" // 400
	ErrAuthentication   = "authentication_error"  // 401
	ErrPermission       = "permission_error"      // 403
	ErrNotFound         = "not_found_error"       // 404
	ErrRequestTooLarge  = "request_too_large"     // 413
	ErrRateLimit        = "rate_limit_error"      // 429
	ErrAPI              = "api_error"             // 500
	ErrOverloaded       = "overloaded_error"      // 529
	StatusOverloaded    = 529
	errorEnvelopeType   = "error"
	defaultErrorMessage = "error"
)

var errorStatus = map[string]int{
	ErrInvalidRequest:  http.StatusBadRequest,
	ErrAuthentication:  http.StatusUnauthorized,
	ErrPermission:      http.StatusForbidden,
	ErrNotFound:        http.StatusNotFound,
	ErrRequestTooLarge: http.StatusRequestEntityTooLarge,
	ErrRateLimit:       http.StatusTooManyRequests,
	ErrAPI:             http.StatusInternalServerError,
	ErrOverloaded:      StatusOverloaded,
}

// Status is the HTTP status an error type is answered with (500 for a type
// the API does not define).
func Status(errType string) int {
	if s, ok := errorStatus[errType]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// ErrorBody is the error object: {"type":"overloaded_error","message":"..."}.
type ErrorBody struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// ErrorResponse is an error answer: {"type":"error","error":{...}}, the
// body of a non-2xx response and the data of a stream's error event.
type ErrorResponse struct {
	Type  string    `json:"type"`
	Error ErrorBody `json:"error"`
}

// APIError is an error the API answers, as a Go error.
type APIError struct {
	Status int
	Body   ErrorBody
}

func (e *APIError) Error() string {
	return strconv.Itoa(e.Status) + " " + e.Body.Type + ": " + e.Body.Message
}

// NewError returns the error of type errType with its status.
func NewError(errType, message string) *APIError {
	if message == "" {
		message = defaultErrorMessage
	}
	return &APIError{Status: Status(errType), Body: ErrorBody{Type: errType, Message: message}}
}

// WriteError answers e in the API's error shape, with a request-id header.
func WriteError(w http.ResponseWriter, e *APIError) {
	b, _ := json.Marshal(ErrorResponse{Type: errorEnvelopeType, Error: e.Body})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	if e.Body.Type == ErrOverloaded || e.Body.Type == ErrRateLimit {
		w.Header().Set("Retry-After", "1")
	}
	w.WriteHeader(e.Status)
	_, _ = w.Write(b)
}
