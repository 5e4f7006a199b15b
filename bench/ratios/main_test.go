package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    results
		wantErr string
	}{
		{
			name: "figures on the name's line",
			in: "goos: linux\n" +
				"BenchmarkWSOneWay/direct-2   \t  161128\t      8260 ns/op\t 123.97 MB/s\n" +
				"BenchmarkCompression/unique-2 \t 19\t 56589221 ns/op\t 6.800 ratio\n" +
				"PASS\n",
			want: results{
				"BenchmarkWSOneWay/direct":    {"ns/op": 8260, "MB/s": 123.97},
				"BenchmarkCompression/unique": {"ns/op": 56589221, "ratio": 6.8},
			},
		},
		{
			name: "a child's stderr between the name and its figures",
			in: "BenchmarkWSBig/direct-2 \t 12\t 129294926 ns/op\t 519.04 MB/s\n" +
				"wireproof: recording http://127.0.0.1:41349 -> http://127.0.0.1:34471 into /tmp/x/big.zst\n" +
				"BenchmarkWSBig/recorded-2 \twireproof: recording http://127.0.0.1:46453 -> http://127.0.0.1:34471 into /tmp/y/big.zst\n" +
				"wireproof: recording http://127.0.0.1:36591 -> http://127.0.0.1:34471 into /tmp/z/big.zst\n" +
				"       3\t 446674596 ns/op\t 150.24 MB/s\t 164.7 peak-MiB\t 2.573 peak-x\n",
			want: results{
				"BenchmarkWSBig/direct":   {"ns/op": 129294926, "MB/s": 519.04},
				"BenchmarkWSBig/recorded": {"ns/op": 446674596, "MB/s": 150.24, "peak-MiB": 164.7, "peak-x": 2.573},
			},
		},
		{
			name:    "a name whose figures never come",
			in:      "BenchmarkWSBig/recorded-2 \t--- FAIL: BenchmarkWSBig/recorded\n",
			want:    results{},
			wantErr: "BenchmarkWSBig/recorded: no figures found after its name",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parse(strings.NewReader(tt.in))
			if gotErr := errString(err); gotErr != tt.wantErr {
				t.Fatalf("error %q, want %q", gotErr, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parse (-want +got):\n%s", diff)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
