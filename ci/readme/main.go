// Command readme runs the README's shell blocks as a new user pastes them:
// in order, in a fresh clone of the repository's HEAD, each run of a block's
// lines in one bash (background jobs and all, as in a terminal), failing on
// the first line that fails. Two kinds of line are not run to their end:
//
//   - go test -race ./..., which ci/check.sh runs itself just before;
//   - tunnelprobe scenario, minutes to an hour long: it is started, sent
//     SIGINT (as Ctrl-C does) after its first progress line, and must then
//     exit 130 (go run: 1, whatever the program's code) and leave a
//     report.json or matrix.json marked interrupted, so that what a user
//     stops is never lost.
//
// A docker line runs where a Docker daemon answers, and always under
// TUNNELPROBE_REQUIRE_DOCKER=1 (as .ci/run sets). Whatever a block leaves
// running is killed with it. Run it from the
// repository's root: go run ./ci/readme
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/cliflag"
)

const (
	// sessionLimit bounds a run of ordinary lines; firstProgressLimit the
	// wait for a scenario's first progress line (a first build included),
	// interruptLimit its end after SIGINT.
	sessionLimit       = 10 * time.Minute
	firstProgressLimit = 5 * time.Minute
	interruptLimit     = 2 * time.Minute
)

// progressLine is in a scenario's progress line on stderr: "[   5s/90s
// loaded] ...", after "run 1/10, ~31m40s left " in a matrix.
var progressLine = regexp.MustCompile(`(^|left )\[ *\d+s/\d+s `)

func main() {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		fail(err)
	}
	blocks := shellBlocks(readme)
	if len(blocks) == 0 {
		fail(errors.New("README.md has no sh block"))
	}
	dir, err := os.MkdirTemp("", "tunnelprobe-readme-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)
	clone := filepath.Join(dir, "tunnelprobe")
	if out, err := exec.Command("git", "clone", "-q", ".", clone).CombinedOutput(); err != nil {
		fail(fmt.Errorf("git clone: %v\n%s", err, out))
	}
	for i, block := range blocks {
		fmt.Printf("--- block %d of %d\n", i+1, len(blocks))
		if err := runBlock(clone, block); err != nil {
			fail(fmt.Errorf("block %d: %w", i+1, err))
		}
	}
	fmt.Printf("--- all %d blocks of README.md ran\n", len(blocks))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "readme:", err)
	os.Exit(1)
}

// shellBlocks returns the lines of each ```sh block of a Markdown text.
func shellBlocks(md []byte) [][]string {
	var blocks [][]string
	var cur []string
	in := false
	for line := range strings.Lines(string(md)) {
		line = strings.TrimRight(line, "\n")
		switch {
		case !in && strings.TrimSpace(line) == "```sh":
			in, cur = true, nil
		case in && strings.TrimSpace(line) == "```":
			in = false
			blocks = append(blocks, cur)
		case in && strings.TrimSpace(line) != "":
			cur = append(cur, line)
		}
	}
	return blocks
}

// runBlock runs block's lines in dir: ordinary lines together, a test run
// skipped, a scenario started and interrupted.
func runBlock(dir string, block []string) error {
	var pending []string
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		script := strings.Join(pending, "\n")
		pending = nil
		return runSession(dir, script)
	}
	for _, line := range block {
		switch {
		case strings.HasPrefix(line, "go test "):
			fmt.Printf("$ %s\n(skipped: ci/check.sh has just run it)\n", line)
		case strings.HasPrefix(line, "docker ") && !dockerRuns():
			fmt.Printf("$ %s\n(skipped: no Docker daemon answers, and TUNNELPROBE_REQUIRE_DOCKER is not 1)\n", line)
		case strings.Contains(line, "tunnelprobe scenario"):
			if err := flush(); err != nil {
				return err
			}
			if err := interruptScenario(dir, line); err != nil {
				return fmt.Errorf("%s: %w", line, err)
			}
		default:
			pending = append(pending, line)
		}
	}
	return flush()
}

// dockerRuns reports whether the docker lines are to run: where a daemon
// answers, and always under TUNNELPROBE_REQUIRE_DOCKER=1 (as CI sets),
// where a missing daemon is a failure, as in the tests.
func dockerRuns() bool {
	if os.Getenv("TUNNELPROBE_REQUIRE_DOCKER") == "1" {
		return true
	}
	return exec.Command("docker", "info").Run() == nil
}

// runSession runs script in one bash in its own process group, which is
// killed when bash ends, so that a block's background jobs end with it.
func runSession(dir, script string) error {
	fmt.Printf("$ %s\n", strings.ReplaceAll(script, "\n", "\n$ "))
	ctx, cancel := context.WithTimeout(context.Background(), sessionLimit)
	defer cancel()
	cmd := command(ctx, dir, "set -e\n"+script)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stdout
	err := cmd.Run()
	// A background job the block did not stop (a line before its kill
	// failed) must not outlive it, holding a port or CI's output.
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if ctx.Err() != nil {
		return fmt.Errorf("still running after %v", sessionLimit)
	}
	return err
}

// command returns bash running script in dir, in a process group of its
// own that is killed, leftovers included, when ctx ends.
func command(ctx context.Context, dir, script string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// interruptScenario starts a scenario line, interrupts it as Ctrl-C does
// after its first progress line, and checks that it kept what it measured.
func interruptScenario(dir, line string) error {
	fmt.Printf("$ %s\n(interrupted after its first progress line)\n", line)
	before, _ := filepath.Glob(filepath.Join(dir, "scenario-results*"))
	ctx, cancel := context.WithTimeout(context.Background(), firstProgressLimit+interruptLimit)
	defer cancel()
	cmd := command(ctx, dir, line)
	cmd.Stdout = os.Stdout
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // whatever is left
	progress, done := make(chan struct{}), make(chan struct{})
	go watchProgress(stderr, progress, done)
	select {
	case <-progress:
	case <-done:
		return fmt.Errorf("ended before its first progress line: %v", cmd.Wait())
	case <-time.After(firstProgressLimit):
		return fmt.Errorf("no progress line within %v", firstProgressLimit)
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGINT); err != nil {
		return err
	}
	select { // all of stderr, before Wait closes it
	case <-done:
	case <-time.After(interruptLimit):
		return fmt.Errorf("still running %v after SIGINT", interruptLimit)
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	// go run exits 1 whenever the program it ran did not exit 0, whatever
	// the program's own code: the folder the program wrote decides.
	interrupted := cliflag.ExitInterrupted
	if strings.HasPrefix(line, "go run ") {
		interrupted = 1
	}
	if !errors.As(err, &exit) || exit.ExitCode() != interrupted {
		return fmt.Errorf("after SIGINT: %v, want exit code %d", err, interrupted)
	}
	return keptResults(dir, before)
}

// watchProgress copies r to stdout, closes progress at the first progress
// line and done at the end of r.
func watchProgress(r io.Reader, progress, done chan<- struct{}) {
	defer close(done)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	seen := false
	for sc.Scan() {
		fmt.Println(sc.Text())
		if !seen && progressLine.MatchString(sc.Text()) {
			seen = true
			close(progress)
		}
	}
	_, _ = io.Copy(io.Discard, r) // past a line too long to scan: never block the writer
}

// keptResults checks that a results folder not among before holds a report
// or matrix marked interrupted.
func keptResults(dir string, before []string) error {
	after, _ := filepath.Glob(filepath.Join(dir, "scenario-results*"))
	for _, d := range after {
		if slices.Contains(before, d) {
			continue
		}
		for _, name := range []string{"matrix.json", "report.json"} {
			b, err := os.ReadFile(filepath.Join(d, name))
			if err != nil {
				continue
			}
			var doc struct{ Interrupted bool }
			if err := json.Unmarshal(b, &doc); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if !doc.Interrupted {
				return fmt.Errorf("%s/%s is not marked interrupted", filepath.Base(d), name)
			}
			fmt.Printf("(kept: %s/%s, marked interrupted)\n", filepath.Base(d), name)
			return nil
		}
	}
	return fmt.Errorf("no new scenario-results folder with a report.json or matrix.json (had %q, now %q)", before, after)
}
