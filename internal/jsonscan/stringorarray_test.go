package jsonscan

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStringOrArray(t *testing.T) {
	one := func(s string) []string { return []string{"one:" + s} }
	tests := []struct {
		in      string
		want    []string
		wantErr string
	}{
		{`"hi"`, []string{"one:hi"}, ""},
		{` null `, nil, ""},
		{`["a","b"]`, []string{"a", "b"}, ""},
		{`[]`, []string{}, ""},
		{`{"a":1}`, nil, "json: cannot unmarshal object into Go value of type []string"},
		{`7`, nil, "json: cannot unmarshal number into Go value of type []string"},
	}
	for _, tt := range tests {
		got, err := StringOrArray([]byte(tt.in), reflect.TypeFor[[]string](), one)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if diff := cmp.Diff(tt.want, got); diff != "" || gotErr != tt.wantErr {
			t.Errorf("StringOrArray(%s) = %q, %q; want %q, %q", tt.in, got, gotErr, tt.want, tt.wantErr)
		}
	}
}
