package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
)

// Kind names the JSON kind of the value b starts with, as encoding/json's
// UnmarshalTypeError.Value does: "object", "array", "string", "number",
// "bool", "null", or "" when b starts with none of them.
func Kind(b []byte) string {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 {
		return ""
	}
	switch c := b[0]; {
	case c == '{':
		return "object"
	case c == '[':
		return "array"
	case c == '"':
		return "string"
	case c == 't' || c == 'f':
		return "bool"
	case c == 'n':
		return "null"
	case c == '-' || (c >= '0' && c <= '9'):
		return "number"
	}
	return ""
}

// TypeError is the error of a value b that did not decode as t, for a
// custom UnmarshalJSON to return: a type error inside b as it is
// (encoding/json prefixes its field with the path to b), else one naming t
// and the kind of value b is.
func TypeError(err error, b []byte, t reflect.Type) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && (te.Field != "" || (te.Type != nil && te.Type.Kind() == reflect.Struct)) {
		return te
	}
	return &json.UnmarshalTypeError{Value: Kind(b), Type: t}
}

// StringOrArray decodes b, a JSON string, null or an array of E, for a
// custom UnmarshalJSON of a field the wire spells either way (a message's
// content, a request's input): a string becomes one(s), null nil, an array
// its elements; any other value is a TypeError naming t.
func StringOrArray[E any](b []byte, t reflect.Type, one func(string) []E) ([]E, error) {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, err
		}
		return one(s), nil
	case bytes.Equal(b, []byte("null")):
		return nil, nil
	}
	var elems []E
	if err := json.Unmarshal(b, &elems); err != nil {
		return nil, TypeError(err, b, t)
	}
	return elems, nil
}
