package triage_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/wireproof/wireproof/triage"
)

// WriteReport highlights the row of the event that decided a failed run.
func ExampleWriteReport() {
	tl, err := triage.Load(context.Background(), "../fixtures/golden/live/idle-duplicate-notification.zst", nil)
	if err != nil {
		panic(err)
	}
	var page strings.Builder
	if err := triage.WriteReport(&page, tl, nil); err != nil {
		panic(err)
	}
	fmt.Println(strings.Contains(page.String(), `<tr id="seq-138" class="fail">`))
	// Output:
	// true
}
