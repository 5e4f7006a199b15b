package testkit

import (
	"sync"
	"testing"
)

// Concurrently runs check(g, i) for rounds i in each of goroutines g at
// once, and fails t with the first error any returned (its goroutine stops
// there): for state shared between goroutines, run with -race.
func Concurrently(t testing.TB, goroutines, rounds int, check func(g, i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		wg.Go(func() {
			for i := range rounds {
				if err := check(g, i); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
