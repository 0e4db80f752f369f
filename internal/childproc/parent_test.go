package childproc_test

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/tunnelprobe/tunnelprobe/internal/childproc"
)

func TestRunChildWithoutConfiguration(t *testing.T) {
	var out strings.Builder
	err := childproc.RunChild(t.Context(), strings.NewReader(""), &out, testChild)
	if err == nil || !strings.Contains(out.String(), `"error":"no configuration from the parent`) {
		t.Errorf("RunChild = %v, stdout %q; want the error told to the parent", err, out.String())
	}
}

// TestRunChildStoppedBeforeConfiguration: a child stopped before its
// parent said anything has nothing to do and nothing to report.
func TestRunChildStoppedBeforeConfiguration(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var out strings.Builder
	stdin, parent := io.Pipe() // a parent that says nothing
	defer parent.Close()
	if err := childproc.RunChild(ctx, stdin, &out, testChild); err != nil || out.Len() != 0 {
		t.Errorf("RunChild = %v, stdout %q; want nil and nothing", err, out.String())
	}
}

func TestRunChildReportsItsFailure(t *testing.T) {
	var out strings.Builder
	err := childproc.RunChild(context.Background(), strings.NewReader(`{"mode":"fail-before-ready"}`+"\n"), &out, testChild)
	if err == nil || out.String() != `{"error":"cannot set up"}`+"\n" {
		t.Errorf("RunChild = %v, stdout %q; want the failure told to the parent", err, out.String())
	}
}
