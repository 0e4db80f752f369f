package loadgen_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/childproc"
	"github.com/tunnelprobe/tunnelprobe/loadgen"
)

func TestRunChildSpeaksTheFleetProtocol(t *testing.T) {
	s := startSink(t, "127.0.0.1:0")
	cfg, err := json.Marshal(loadgen.ChildConfig{Target: s.Addr, Conns: 3, Duration: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// The parent's two lines: the child's share of the run, then the
	// instant to start at.
	stdin := strings.NewReader(fmt.Sprintf("%s\n%d\n", cfg, time.Now().UnixNano()))
	var stdout bytes.Buffer
	if err := loadgen.RunChild(context.Background(), stdin, &stdout); err != nil {
		t.Fatal(err)
	}
	var ready bool
	var seconds int
	var res *loadgen.Result
	var reports []string // the window's edges and the result, in order
	dec := json.NewDecoder(&stdout)
	for dec.More() {
		var m childproc.Message[loadgen.ChildReport]
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		switch {
		case m.Ready:
			ready = true
		case m.Data != nil && m.Data.Second != nil:
			seconds++
		case m.Data != nil && m.Data.Window != "":
			reports = append(reports, m.Data.Window)
		case m.Data != nil && m.Data.Result != nil:
			res = m.Data.Result
			reports = append(reports, "result")
		case m.Error != "":
			t.Errorf("child error: %s", m.Error)
		}
	}
	if !ready || res == nil || res.ConnsAchieved != 3 {
		t.Errorf("ready %v, %d seconds, result %+v; want ready, then a result of 3 connections", ready, seconds, res)
	}
	// The parent reads what the far side received at the window's edges.
	if want := []string{loadgen.WindowStarted, loadgen.WindowEnded, "result"}; !slices.Equal(reports, want) {
		t.Errorf("reports %q, want %q", reports, want)
	}
}

func TestRunChildRefusesABadConfiguration(t *testing.T) {
	var stdout bytes.Buffer
	err := loadgen.RunChild(context.Background(), strings.NewReader(`{"target":"nowhere","conns":1}`+"\n"), &stdout)
	if err == nil || !strings.Contains(stdout.String(), `"error"`) {
		t.Errorf("RunChild = %v, stdout %q; want an error told to the parent", err, stdout.String())
	}
}
