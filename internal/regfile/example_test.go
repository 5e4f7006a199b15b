package regfile_test

import (
	"fmt"

	"github.com/wireproof/wireproof/internal/regfile"
)

func ExampleOpen() {
	_, err := regfile.Open(".")
	fmt.Println(err)
	// Output: . is a directory, not a regular file
}
