package cliflag

import (
	"bytes"
	"flag"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/preset"
)

func TestEnvName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ set, flag, want string }{
		{"tunnelprobe serve", "failure-threshold", "TUNNELPROBE_FAILURE_THRESHOLD"},
		{"tunnelprobe serve", "tls-ca", "TUNNELPROBE_TLS_CA"},
		{"test", "listen", "TUNNELPROBE_LISTEN"},
		{"tunnelprobe load", "rate", "TUNNELPROBE_LOAD_RATE"},
		{"tunnelprobe lab link", "rate", "TUNNELPROBE_LAB_LINK_RATE"},
		{"tunnelprobe probe", "timeout", "TUNNELPROBE_PROBE_TIMEOUT"},
	} {
		if got := EnvName(flag.NewFlagSet(tc.set, flag.ContinueOnError), tc.flag); got != tc.want {
			t.Errorf("EnvName(%q, %q) = %q, want %q", tc.set, tc.flag, got, tc.want)
		}
	}
}

// testFlags is a flag set with one flag of each kind parseWithEnv handles.
type testFlags struct {
	fs      *flag.FlagSet
	name    string
	verbose bool
	count   int
	period  time.Duration
	targets StringList
	ladder  middleware.Ladder
}

func newTestFlags() *testFlags {
	f := &testFlags{fs: flag.NewFlagSet("test", flag.ContinueOnError)}
	f.fs.SetOutput(io.Discard)
	f.fs.StringVar(&f.name, "name", "default", "")
	f.fs.BoolVar(&f.verbose, "verbose", false, "")
	f.fs.Var(Int(&f.count, 1, 1), "count", "")
	f.fs.Var(Duration(&f.period, 5*time.Second, false), "period", "")
	f.targets = StringList{Values: []string{"a:1"}}
	f.fs.Var(&f.targets, "target", "")
	f.fs.TextVar(&f.ladder, "ladder", middleware.Ladder(nil), "")
	return f
}

func envMap(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		args        []string
		env         map[string]string
		wantName    string
		wantVerbose bool
		wantCount   int
		wantPeriod  time.Duration
		wantTargets []string
		wantLadder  []time.Duration
	}{
		{
			name:     "defaults",
			wantName: "default", wantCount: 1, wantPeriod: 5 * time.Second, wantTargets: []string{"a:1"},
		},
		{
			name: "environment",
			env: map[string]string{
				"TUNNELPROBE_NAME": "env", "TUNNELPROBE_VERBOSE": "true", "TUNNELPROBE_COUNT": "3",
				"TUNNELPROBE_PERIOD": "1s", "TUNNELPROBE_TARGET": "b:2, c:3", "TUNNELPROBE_LADDER": "1s,2s",
			},
			wantName: "env", wantVerbose: true, wantCount: 3, wantPeriod: time.Second,
			wantTargets: []string{"b:2", "c:3"}, wantLadder: []time.Duration{time.Second, 2 * time.Second},
		},
		{
			name: "command line wins",
			args: []string{"--name", "flag", "-verbose=false", "--count=2", "--target", "d:4", "--target", "e:5", "--ladder", "reference"},
			env: map[string]string{
				"TUNNELPROBE_NAME": "env", "TUNNELPROBE_VERBOSE": "true", "TUNNELPROBE_COUNT": "3",
				"TUNNELPROBE_PERIOD": "1s", "TUNNELPROBE_TARGET": "b:2,c:3", "TUNNELPROBE_LADDER": "1s",
			},
			wantName: "flag", wantCount: 2, wantPeriod: time.Second,
			wantTargets: []string{"d:4", "e:5"}, wantLadder: preset.ReferenceTimeouts,
		},
		{
			name:     "empty variable is unset",
			env:      map[string]string{"TUNNELPROBE_NAME": "", "TUNNELPROBE_COUNT": ""},
			wantName: "default", wantCount: 1, wantPeriod: 5 * time.Second, wantTargets: []string{"a:1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newTestFlags()
			if err := Parse(f.fs, tt.args, envMap(tt.env)); err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if f.name != tt.wantName || f.verbose != tt.wantVerbose || f.count != tt.wantCount || f.period != tt.wantPeriod {
				t.Errorf("got name=%q verbose=%v count=%d period=%v, want %q %v %d %v",
					f.name, f.verbose, f.count, f.period, tt.wantName, tt.wantVerbose, tt.wantCount, tt.wantPeriod)
			}
			if !slices.Equal(f.targets.Values, tt.wantTargets) {
				t.Errorf("targets = %q, want %q", f.targets.Values, tt.wantTargets)
			}
			if !slices.Equal(f.ladder, middleware.Ladder(tt.wantLadder)) {
				t.Errorf("ladder = %v, want %v", f.ladder, tt.wantLadder)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want []string // substrings of the error
	}{
		{"bad flag", []string{"--count", "x"}, nil, []string{"-count"}},
		{"bad env", nil, map[string]string{"TUNNELPROBE_COUNT": "0"}, []string{"--count", "TUNNELPROBE_COUNT", "at least 1"}},
		{"bad env list", nil, map[string]string{"TUNNELPROBE_TARGET": "a,,b"}, []string{"--target", "TUNNELPROBE_TARGET"}},
		{"bad env bool", nil, map[string]string{"TUNNELPROBE_VERBOSE": "maybe"}, []string{"--verbose", "TUNNELPROBE_VERBOSE"}},
		{
			"every bad env", nil,
			map[string]string{"TUNNELPROBE_PERIOD": "-1s", "TUNNELPROBE_LADDER": "1s,x"},
			[]string{"TUNNELPROBE_PERIOD", "TUNNELPROBE_LADDER"},
		},
		{"unknown flag", []string{"--bogus"}, nil, []string{"bogus"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := Parse(newTestFlags().fs, tt.args, envMap(tt.env))
			if err == nil {
				t.Fatal("Parse succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestParseCommand(t *testing.T) {
	t.Parallel()
	t.Run("help", func(t *testing.T) {
		t.Parallel()
		var stdout, stderr bytes.Buffer
		code, ok := ParseCommand(newTestFlags().fs, []string{"-h"}, envMap(nil), "Usage: test", &stdout, &stderr)
		if ok || code != 0 {
			t.Fatalf("got code=%d ok=%v, want 0 false", code, ok)
		}
		for _, w := range []string{"Usage: test", "--count", "$TUNNELPROBE_COUNT", "--target", "$TUNNELPROBE_TARGET"} {
			if !strings.Contains(stdout.String(), w) {
				t.Errorf("help lacks %q:\n%s", w, &stdout)
			}
		}
	})
	t.Run("positional argument", func(t *testing.T) {
		t.Parallel()
		var stdout, stderr bytes.Buffer
		code, ok := ParseCommand(newTestFlags().fs, []string{"--count", "2", "stray"}, envMap(nil), "", &stdout, &stderr)
		if ok || code != 2 {
			t.Fatalf("got code=%d ok=%v, want 2 false", code, ok)
		}
		if !strings.Contains(stderr.String(), `"stray"`) {
			t.Errorf("stderr does not name the argument: %s", &stderr)
		}
	})
	t.Run("ok", func(t *testing.T) {
		t.Parallel()
		var stdout, stderr bytes.Buffer
		if code, ok := ParseCommand(newTestFlags().fs, []string{"--count", "2"}, envMap(nil), "", &stdout, &stderr); !ok {
			t.Fatalf("got code=%d ok=%v; stderr: %s", code, ok, &stderr)
		}
	})
}

func FuzzParse(f *testing.F) {
	f.Add("--count=2", "1s", "a,b")
	f.Add("stray", "-1s", ",")
	f.Fuzz(func(t *testing.T, arg, period, targets string) {
		fl := newTestFlags()
		env := map[string]string{"TUNNELPROBE_PERIOD": period, "TUNNELPROBE_TARGET": targets}
		if err := Parse(fl.fs, []string{arg}, envMap(env)); err != nil {
			return
		}
		if fl.period <= 0 || fl.count < 1 || len(fl.targets.Values) == 0 {
			t.Fatalf("accepted period=%v count=%d targets=%q", fl.period, fl.count, fl.targets.Values)
		}
	})
}

func TestParseInterspersed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args      []string
		env       map[string]string
		files     []string
		json, plt string
	}{
		{[]string{"a", "b"}, nil, []string{"a", "b"}, "", ""},
		{[]string{"--json", "o", "a", "b"}, nil, []string{"a", "b"}, "o", ""},
		{[]string{"a", "--json", "o", "b", "--plot=p"}, nil, []string{"a", "b"}, "o", "p"},
		{[]string{"a", "--", "--json", "b"}, nil, []string{"a", "--json", "b"}, "", ""},
		{[]string{"a"}, map[string]string{"TUNNELPROBE_JSON": "e"}, []string{"a"}, "e", ""},
		{[]string{"--json", "c", "a"}, map[string]string{"TUNNELPROBE_JSON": "e"}, []string{"a"}, "c", ""},
	} {
		fs := flag.NewFlagSet("merge", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var f struct{ jsonOut, plotOut string }
		fs.StringVar(&f.jsonOut, "json", "", "")
		fs.StringVar(&f.plotOut, "plot", "", "")
		files, err := ParseInterspersed(fs, tc.args, envMap(tc.env))
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if !slices.Equal(files, tc.files) || f.jsonOut != tc.json || f.plotOut != tc.plt {
			t.Errorf("%q: files %q json %q plot %q; want %q %q %q", tc.args, files, f.jsonOut, f.plotOut, tc.files, tc.json, tc.plt)
		}
	}
}
