package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/wireproof/wireproof/internal/jsonscan"
	"github.com/wireproof/wireproof/model/anthropic"
	"github.com/wireproof/wireproof/model/openai"
)

// apiTerms names, in the APIs' own words, what a field of the given Go
// type holds on the wire. A type not listed is named by its JSON kind.
var apiTerms = map[reflect.Type]string{
	reflect.TypeFor[[]anthropic.Message](): "an array of message objects",
	reflect.TypeFor[anthropic.Message]():   "a message object",
	reflect.TypeFor[[]anthropic.Tool]():    "an array of tool objects",
	reflect.TypeFor[anthropic.Tool]():      "a tool object",
	reflect.TypeFor[anthropic.Content]():   "a string or an array of content blocks",
	reflect.TypeFor[anthropic.Block]():     "a content block object",
	reflect.TypeFor[openai.Item]():         "an input item object",
	reflect.TypeFor[openai.Part]():         "a content part object",
	reflect.TypeFor[[]openai.Item]():       "a string or an array of input items",
	reflect.TypeFor[openai.Input]():        "a string or an array of input items",
	reflect.TypeFor[openai.Content]():      "a string or an array of content parts",
	reflect.TypeFor[openai.Output]():       "a string or an array of content parts",
	reflect.TypeFor[[]openai.Tool]():       "an array of tool objects",
	reflect.TypeFor[openai.Tool]():         "a tool object",
}

// pathStyle spells a field's path: the Messages API's messages.1.content
// or the Responses API's input[1].content.
type pathStyle int

const (
	anthropicPath pathStyle = iota
	openaiPath
)

// bodyError is what was wrong with a request body that did not decode,
// in the API's terms (which field, what was expected, what was sent)
// rather than encoding/json's Go types. Param is the field's path, "" when
// the fault is not a field's.
type bodyError struct {
	Message, Param string
}

// describeJSONError says what was wrong with body, which did not decode
// with err: a type error names the field with its array indices, found
// again in body (encoding/json's path has no indices).
func describeJSONError(err error, body []byte, style pathStyle) bodyError {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te) && te.Field == "" && te.Type != nil && te.Type.Kind() == reflect.Struct:
		return bodyError{Message: "request body is not a JSON object"}
	case errors.As(err, &te):
		param := te.Field
		if path, ok := locate(body, te); ok {
			param = spell(path, style)
		}
		what, got := expected(te.Type), article(kindOf(te.Value))
		switch {
		case param == "":
			return bodyError{Message: "request body: expected " + what + ", got " + got}
		case style == openaiPath:
			return bodyError{Message: "Invalid type for '" + param + "': expected " + what + ", but got " + got + " instead.", Param: param}
		}
		return bodyError{Message: param + ": expected " + what + ", got " + got, Param: param}
	case errors.As(err, &se):
		return bodyError{Message: "request body is not valid JSON: " + strings.TrimPrefix(se.Error(), "json: ")}
	}
	return bodyError{Message: "request body is not valid JSON"}
}

// kindOf is the JSON kind of an UnmarshalTypeError's Value ("number 300"
// for a number that does not fit is a number).
func kindOf(value string) string {
	kind, _, _ := strings.Cut(value, " ")
	return kind
}

// spell writes a located path in the API's style.
func spell(path []segment, style pathStyle) string {
	var b strings.Builder
	for i, seg := range path {
		switch {
		case seg.key == "" && style == openaiPath:
			fmt.Fprintf(&b, "[%d]", seg.index)
		case i > 0:
			b.WriteByte('.')
			fallthrough
		default:
			if seg.key != "" {
				b.WriteString(seg.key)
			} else {
				b.WriteString(strconv.Itoa(seg.index))
			}
		}
	}
	return b.String()
}

// segment is one step of a path: an object's key, or an array's index
// (key "").
type segment struct {
	key   string
	index int
}

// locate finds in body the first value te is about, and its path with
// array indices. te.Field is the path of keys alone (encoding/json does
// not record indices), so every array on the way is searched, in order,
// for a value of te's kind at the end of the path; encoding/json reports
// the first type error in the body, and a value of that kind there is an
// error wherever it is. A type error about an element (a struct type,
// where the value at the path is an array) is an element of that array.
func locate(body []byte, te *json.UnmarshalTypeError) ([]segment, bool) {
	var keys []string
	if te.Field != "" {
		keys = strings.Split(te.Field, ".")
	}
	kind := kindOf(te.Value)
	element := te.Type != nil && te.Type.Kind() == reflect.Struct
	var found []segment
	var walk func(s *jsonscan.Scanner, depth int, keys []string, path []segment) bool
	// each walks the elements of the array s is at, calling visit with
	// each one's path; visit consumes it.
	each := func(s *jsonscan.Scanner, depth int, path []segment, visit func(path []segment) bool) bool {
		i := 0
		return s.Array(depth, func() bool {
			p := append(path[:len(path):len(path)], segment{index: i})
			i++
			return visit(p)
		})
	}
	walk = func(s *jsonscan.Scanner, depth int, keys []string, path []segment) bool {
		s.Space()
		here := jsonscan.Kind(s.Rest())
		switch {
		case len(keys) == 0 && element && here == "array":
			return each(s, depth, path, func(p []segment) bool {
				s.Space()
				if jsonscan.Kind(s.Rest()) == kind {
					found = p
					return false
				}
				return s.Skip(depth + 1)
			})
		case len(keys) == 0 && here == kind:
			found = path
			return false
		case len(keys) > 0 && here == "object":
			return s.Object(depth, func(key []byte, plain bool) bool {
				if !plain {
					if k, ok := jsonscan.AppendUnquote(nil, key); ok {
						key = k
					}
				}
				if strings.EqualFold(string(key), keys[0]) {
					return walk(s, depth+1, keys[1:], append(path[:len(path):len(path)], segment{key: keys[0]}))
				}
				return s.Skip(depth + 1)
			})
		case len(keys) > 0 && here == "array":
			return each(s, depth, path, func(p []segment) bool { return walk(s, depth+1, keys, p) })
		}
		return s.Skip(depth)
	}
	s := jsonscan.NewScanner(body)
	walk(&s, 0, keys, nil)
	return found, found != nil
}

// expected names what a value of type t is on the wire.
func expected(t reflect.Type) string {
	if t == nil {
		return "a different type"
	}
	if s, ok := apiTerms[t]; ok {
		return s
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "an object"
}

// article puts "a"/"an" before a JSON kind (array, object, number...).
func article(kind string) string {
	switch {
	case kind == "":
		return "a value of another type"
	case strings.ContainsRune("aeiou", rune(kind[0])):
		return "an " + kind
	}
	return "a " + kind
}
