package cassette_test

import (
	"fmt"

	"github.com/wireproof/wireproof/model/cassette"
)

// A recorded request and a live one of another run match; the recorded
// gate URL is bound to this run's, and the recorded answer carries it.
func ExampleMatch() {
	rec, _ := cassette.ParseShape("/v1/messages", []byte(`{"model":"m","messages":[{"role":"user","content":"Run curl http://127.0.0.1:4000/0b7cf1a2-3d4e-4f50-8a6b-7c8d9e0f1a2b"}]}`))
	live, _ := cassette.ParseShape("/v1/messages", []byte(`{"model":"m","messages":[{"role":"user","content":"Run curl http://127.0.0.1:5000/b330e73c-abad-488c-888b-d0069d6f5f5e"}]}`))
	bind, diff := cassette.Match(rec, live)
	fmt.Println(diff == nil)
	fmt.Println(bind.Apply(`{"command":"curl --fail --silent http://127.0.0.1:4000/0b7cf1a2-3d4e-4f50-8a6b-7c8d9e0f1a2b"}`))

	other, _ := cassette.ParseShape("/v1/messages", []byte(`{"model":"m","messages":[{"role":"user","content":"Run wget http://127.0.0.1:5000/b330e73c-abad-488c-888b-d0069d6f5f5e"}]}`))
	_, diff = cassette.Match(rec, other)
	fmt.Println(diff.Path)
	// Output:
	// true
	// {"command":"curl --fail --silent http://127.0.0.1:5000/b330e73c-abad-488c-888b-d0069d6f5f5e"}
	// messages[0].content[0].text
}
