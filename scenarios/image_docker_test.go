package scenarios

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
	"golang.org/x/crypto/x509roots/fallback/bundle"

	"github.com/tunnelprobe/tunnelprobe/internal/testcert"
)

// TestRootImageServes builds the image deploy/ names from the repository's
// Dockerfile, as its two commands do (a static binary, then docker build),
// runs its default command, the health server, and shows which roots its
// tls and https checks trust in an image that has none of its own.
func TestRootImageServes(t *testing.T) {
	t.Parallel()
	cli := needDocker(t)
	logger := newTCLogger(t)
	image := buildStaticImage(t.Context(), t, cli, logger, fmt.Sprintf("tunnelprobe-root:%d-%04x", time.Now().Unix(), rand.IntN(1<<16)),
		filepath.Join("..", "Dockerfile"), func(dir string) error {
			ignore, err := os.ReadFile(filepath.Join("..", ".dockerignore"))
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, ".dockerignore"), ignore, 0o644)
		})
	t.Run("health server", func(t *testing.T) { imageServes(t, image, logger) })
	t.Run("embedded roots", func(t *testing.T) { imageRoots(t, image, logger, nil) })
	t.Run("--tls-ca replaces them", func(t *testing.T) { imageRoots(t, image, logger, testcert.Must(t).CAPEM) })
}

// imageServes runs the image's health server and checks through it.
func imageServes(t *testing.T, image string, logger *tcLogger) {
	ctx := t.Context()
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

// isrgRootX1 is the subject of a root the Mozilla bundle holds (Let's
// Encrypt's).
const isrgRootX1 = "CN=ISRG Root X1,O=Internet Security Research Group,C=US"

// imageRoots starts serve in the image, which has no CA certificates,
// with --tls-ca and caPEM as its file if caPEM is set, and checks from its
// log (at debug level, each root's subject) that its tls and https checks
// trust the embedded Mozilla bundle, or the file's CA alone.
func imageRoots(t *testing.T, image string, logger *tcLogger, caPEM []byte) {
	ctx := t.Context()
	req := testcontainers.ContainerRequest{
		Image: image,
		Cmd:   []string{"serve", "--mode", "probe", "--target", "127.0.0.1:1", "--log-format", "json", "--log-level", "debug"},
		// Logged after the roots.
		WaitingFor: wait.ForLog("serving health endpoints").WithStartupTimeout(time.Minute),
	}
	wantFrom, wantCount, wantSubject := "embedded Mozilla bundle", 0, isrgRootX1
	for range bundle.Roots() {
		wantCount++
	}
	if caPEM != nil {
		req.Cmd = append(req.Cmd, "--tls-ca", "/ca.pem")
		req.Files = []testcontainers.ContainerFile{{Reader: bytes.NewReader(caPEM), ContainerFilePath: "/ca.pem", FileMode: 0o644}}
		wantFrom, wantCount, wantSubject = "--tls-ca /ca.pem", 1, "CN=tunnelprobe lab CA"
	}
	ctr, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{ContainerRequest: req, Started: true, Logger: logger})
	testcontainers.CleanupContainer(t, ctr, testcontainers.StopTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	rc, err := ctr.Logs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var from string
	var count float64
	var subjects []string
	for sc := bufio.NewScanner(rc); sc.Scan(); {
		var line struct {
			Msg, From, Subject string
			Certificates       float64
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue // serve's lines on stdout
		}
		switch line.Msg {
		case "tls roots":
			from, count = line.From, line.Certificates
		case "tls root":
			subjects = append(subjects, line.Subject)
		}
	}
	if from != wantFrom || count != float64(wantCount) || len(subjects) != wantCount {
		t.Errorf("tls roots from %q, %v certificates, %d subjects logged; want %q, %d", from, count, len(subjects), wantFrom, wantCount)
	}
	if !slices.Contains(subjects, wantSubject) {
		t.Errorf("subjects %q, want %q among them", subjects, wantSubject)
	}
	if caPEM != nil && slices.Contains(subjects, isrgRootX1) {
		t.Errorf("--tls-ca trusts %q too, want its CA alone", isrgRootX1)
	}
}

// endpoint returns http://host:port of a container's published port.
func endpoint(ctx context.Context, ctr testcontainers.Container, port string) (string, error) {
	host, err := ctr.Host(ctx)
	if err != nil {
		return "", err
	}
	p, err := ctr.MappedPort(ctx, port)
	if err != nil {
		return "", err
	}
	return "http://" + net.JoinHostPort(host, strconv.Itoa(int(p.Num()))), nil
}
