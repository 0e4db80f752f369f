package cliflag

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
)

func TestDispatch(t *testing.T) {
	var got []string
	commands := []Command{{Name: "serve", Summary: "serve it", Run: func(_ context.Context, args []string, _ func(string) string, _, _ io.Writer) int {
		got = args
		return 7
	}}}
	noEnv := func(string) string { return "" }
	for _, tc := range []struct {
		args     []string
		code     int
		passed   []string
		inStdout string
		inStderr string
	}{
		{[]string{"serve", "--listen", ":1"}, 7, []string{"--listen", ":1"}, "", ""},
		{[]string{"help", "serve"}, 7, []string{"--help"}, "", ""},
		{[]string{"--help"}, 0, nil, "serve it", ""},
		{nil, 2, nil, "", "no command given"},
		{[]string{"bogus"}, 2, nil, "", `unknown command "bogus"`},
		{[]string{"help", "bogus"}, 2, nil, "", `unknown command "bogus"`},
	} {
		got = nil
		var stdout, stderr bytes.Buffer
		code := Dispatch(context.Background(), "tp", commands, tc.args, noEnv, &stdout, &stderr)
		if code != tc.code || strings.Join(got, " ") != strings.Join(tc.passed, " ") ||
			!strings.Contains(stdout.String(), tc.inStdout) || !strings.Contains(stderr.String(), tc.inStderr) {
			t.Errorf("%q: exit %d, passed %q, stdout %q, stderr %q", tc.args, code, got, stdout.String(), stderr.String())
		}
	}
}
