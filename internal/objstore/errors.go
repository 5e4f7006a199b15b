package objstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"

	"github.com/minio/minio-go/v7"
)

// Reason classifies a failed request.
type Reason string

const (
	// ReasonAuth: the service refused the credentials or the request's
	// signature, or they are not allowed to do this.
	ReasonAuth Reason = "credentials refused"
	// ReasonNotFound: no such bucket or object.
	ReasonNotFound Reason = "not found"
	// ReasonUnreachable: no answer from the endpoint.
	ReasonUnreachable Reason = "unreachable"
	// ReasonDigest: the stored object does not match the file.
	ReasonDigest Reason = "digest mismatch"
	// ReasonExists: an object with other bytes is stored under the key.
	ReasonExists Reason = "already exists"
	// ReasonOther: anything else the service answered.
	ReasonOther Reason = "failed"
)

// Error is a failed request to the object store. Its message names the
// operation, the location and the endpoint, never a credential.
type Error struct {
	Op       string // "upload to", "list", "read", ...
	URL      string
	Endpoint string
	Reason   Reason
	Code     string // the service's error code, such as InvalidAccessKeyId
	Msg      string
	Err      error
}

func (e *Error) Error() string {
	s := fmt.Sprintf("object storage: %s %s (%s): %s", e.Op, e.URL, e.Endpoint, e.Reason)
	if e.Code != "" {
		s += " (" + e.Code + ")"
	}
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// DigestError is a stored object that does not match the uploaded file.
type DigestError struct {
	URL string
	Msg string
}

func (e *DigestError) Error() string { return "upload to " + e.URL + " not verified: " + e.Msg }

var authCodes = map[string]bool{
	"InvalidAccessKeyId": true, "SignatureDoesNotMatch": true, "AccessDenied": true,
	"ExpiredToken": true, "InvalidToken": true, "TokenRefreshRequired": true,
	"InvalidClientTokenId": true, "AuthorizationHeaderMalformed": true,
}

// wrap turns an error of the client library into an *Error. Messages are
// the service's (which name an access key id at most) or the library's.
func (c *Client) wrap(op string, u URL, err error) error {
	if err == nil {
		return nil
	}
	var already *Error
	if errors.As(err, &already) {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	e := &Error{Op: op, URL: u.String(), Endpoint: c.Endpoint(), Reason: ReasonOther, Err: err}
	var er minio.ErrorResponse
	var de *DigestError
	var ne net.Error
	var ue *url.Error
	switch {
	case errors.As(err, &de):
		e.Reason, e.Msg = ReasonDigest, de.Msg
	case errors.As(err, &er) && er.Code != "":
		e.Code, e.Msg = er.Code, er.Message
		switch {
		case authCodes[er.Code] || er.StatusCode == 403:
			e.Reason = ReasonAuth
			e.Msg = er.Message + "; check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or the profile in AWS_PROFILE)"
			if c.noCreds {
				e.Msg = er.Message + "; no credentials were found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or a profile in ~/.aws/credentials"
			}
		case er.Code == "NoSuchBucket" || er.Code == "NoSuchKey" || er.StatusCode == 404:
			e.Reason = ReasonNotFound
		}
	case errors.As(err, &ne), errors.As(err, &ue):
		e.Reason, e.Msg = ReasonUnreachable, err.Error()
	default:
		e.Msg = err.Error()
	}
	return e
}

// permanent reports failures that retrying will not mend.
func permanent(err error) bool {
	var er minio.ErrorResponse
	if errors.As(err, &er) {
		return authCodes[er.Code] || er.StatusCode == 403 || er.Code == "NoSuchBucket" || er.Code == "NoSuchKey" || er.StatusCode == 404
	}
	var ce *ConfigError
	return errors.As(err, &ce)
}

// IsAuth reports an error caused by refused credentials.
func IsAuth(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Reason == ReasonAuth
}

// IsNotFound reports a missing bucket or object.
func IsNotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Reason == ReasonNotFound
}
