package redact_test

import (
	"fmt"

	"github.com/wireproof/wireproof/redact"
)

// ExampleSet_Find finds a secret written plain and percent-encoded.
func ExampleSet_Find() {
	set := redact.New([]string{"p@ss/w0rd-7731"}, nil).Snapshot()
	text := []byte(`{"a":"p@ss/w0rd-7731","url":"https://x/?k=p%40ss%2Fw0rd-7731"}`)
	for _, r := range set.Find(text) {
		fmt.Println(string(text[r[0]:r[1]]))
	}
	// Output:
	// p@ss/w0rd-7731
	// p%40ss%2Fw0rd-7731
}
