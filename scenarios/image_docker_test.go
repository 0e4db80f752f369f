package scenarios

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
)

// TestRootImageServes builds the image deploy/ names from the repository's
// Dockerfile, as its two commands do (a static binary, then docker build),
// and runs its default command, the health server.
func TestRootImageServes(t *testing.T) {
	cli := needDocker(t)
	ctx := t.Context()
	logger := newTCLogger(t)
	image := buildStaticImage(ctx, t, cli, logger, fmt.Sprintf("tunnelprobe-root:%d-%04x", time.Now().Unix(), rand.IntN(1<<16)),
		filepath.Join("..", "Dockerfile"), func(dir string) error {
			ignore, err := os.ReadFile(filepath.Join("..", ".dockerignore"))
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, ".dockerignore"), ignore, 0o644)
		})

	// Its entrypoint is the binary and its command serve: arguments after
	// the image replace the command. Nothing listens on port 1 in there.
	ctr, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{
		ContainerRequest: testcontainers.ContainerRequest{
			Image:        image,
			Cmd:          []string{"serve", "--mode", "probe", "--check", "tcp", "--target", "127.0.0.1:1"},
			ExposedPorts: []string{"9999/tcp"},
			WaitingFor: wait.ForHTTP("/").WithPort("9999/tcp").WithStatusCodeMatcher(func(int) bool { return true }).
				WithStartupTimeout(time.Minute),
		},
		Started: true, Logger: logger,
	})
	testcontainers.CleanupContainer(t, ctr, testcontainers.StopTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	base, err := endpoint(ctx, ctr, "9999/tcp")
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Get(base + "/check/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "refused") {
		t.Errorf("GET /check/ in the image: %d %q, want 503 naming the refused dial", resp.StatusCode, body)
	}
}
