package model

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"

	"github.com/wireproof/wireproof/model/anthropic"
	"github.com/wireproof/wireproof/model/openai"
)

// apiTerms names, in the APIs' own words, what a field of the given Go
// type holds on the wire. A type not listed is named by its JSON kind.
var apiTerms = map[reflect.Type]string{
	reflect.TypeFor[[]anthropic.Message](): "an array of message objects",
	reflect.TypeFor[anthropic.Message]():   "an array of message objects",
	reflect.TypeFor[[]anthropic.Tool]():    "an array of tool objects",
	reflect.TypeFor[anthropic.Tool]():      "an array of tool objects",
	reflect.TypeFor[anthropic.Content]():   "a string or an array of content blocks",
	reflect.TypeFor[anthropic.Block]():     "an array of content block objects",
	reflect.TypeFor[openai.Item]():         "a string or an array of input items",
	reflect.TypeFor[openai.Part]():         "an array of content part objects",
	reflect.TypeFor[[]openai.Item]():       "a string or an array of input items",
	reflect.TypeFor[openai.Input]():        "a string or an array of input items",
	reflect.TypeFor[openai.Content]():      "a string or an array of content parts",
	reflect.TypeFor[openai.Output]():       "a string or an array of content parts",
}

// describeJSONError says what was wrong with a request body that did not
// decode, in the API's terms (which field, what was expected, what was
// sent) rather than encoding/json's Go types.
func describeJSONError(err error) string {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te) && te.Field == "" && te.Type != nil && te.Type.Kind() == reflect.Struct:
		return "request body is not a JSON object"
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = "request body"
		}
		return field + ": expected " + expected(te.Type) + ", got " + article(te.Value)
	case errors.As(err, &se):
		return "request body is not valid JSON: " + strings.TrimPrefix(se.Error(), "json: ")
	}
	return "request body is not valid JSON"
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
