package scrub

import "testing"

func TestText(t *testing.T) {
	for _, tc := range []struct{ in, secret, want string }{
		{"thread 0f8fad5b-d9cb-469f-a165-70867728950e done", "", "thread <ID> done"},
		{"curl http://127.0.0.1:41234/x and [::1]:80", "", "curl http://127.0.0.1:<PORT>/x and [::1]:<PORT>"},
		{"ACK:RESULT_abc", "RESULT_abc", "ACK:<SECRET>"},
		{"nothing here", "s3cret", "nothing here"},
	} {
		if got := Text(tc.in, tc.secret); got != tc.want {
			t.Errorf("Text(%q, %q) = %q, want %q", tc.in, tc.secret, got, tc.want)
		}
	}
}

func TestTime(t *testing.T) {
	for _, s := range []string{"2026-11-30T16:17:38Z", "2026-11-30T16:17:38.123456789+01:00"} {
		if !Time.MatchString(s) {
			t.Errorf("Time does not match %q", s)
		}
	}
	if Time.MatchString("2026-11-30") {
		t.Errorf("Time matches a date alone")
	}
}
