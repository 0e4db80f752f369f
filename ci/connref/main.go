// Command connref is the reference for the load generator's connect rate,
// as iperf3 is for its throughput: how fast this machine opens loopback
// TCP connections from Go with nothing else to do. It dials -n connections
// with a plain net.Dialer, -parallel at a time, to a child process that
// only accepts and holds them, and prints the rate as JSON.
//
// ci/bench-load.sh runs it in the same run as the load generator, so that
// a connect rate under target can be told apart from a slow machine. With
// -target it dials that address instead of its own child: a running
// tunnelprobe sink, so that both dialers pay for the same accepting side.
//
//	go run ./ci/connref -n 15000
//	go run ./ci/connref -n 15000 -target 127.0.0.1:9000
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/accept"
)

func main() {
	n := flag.Int("n", 15000, "connections to open (each side holds them all: mind the open-file limit)")
	parallel := flag.Int("parallel", 256, "dials in flight")
	serve := flag.Bool("serve", false, "run as the accepting child")
	target := flag.String("target", "", "dial this `host:port` (a sink that holds the connections) instead of a child of its own")
	flag.Parse()
	if *serve {
		serveAccepts()
		return
	}
	if *n < 1 || *parallel < 1 {
		fmt.Fprintln(os.Stderr, "connref: -n and -parallel must be at least 1")
		os.Exit(2)
	}
	if err := measure(*n, *parallel, *target); err != nil {
		fmt.Fprintln(os.Stderr, "connref:", err)
		os.Exit(1)
	}
}

// serveAccepts prints its address, then accepts and holds connections until its
// stdin closes.
func serveAccepts() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "connref:", err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr())
	var mu sync.Mutex
	var held []net.Conn
	go func() {
		for {
			// Out of files is ridden out; the dialer counts its failures.
			c, err := accept.Next(context.Background(), ln)
			if err != nil {
				return // closed
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	ln.Close()
	mu.Lock()
	defer mu.Unlock()
	for _, c := range held {
		c.Close()
	}
}

// measure dials n connections to target, or to a child of its own when
// target is empty, and prints the rate.
func measure(n, parallel int, target string) error {
	if target != "" {
		return dialAll(target, n, parallel)
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	child := exec.Command(exe, "-serve")
	child.Stderr = os.Stderr
	stdin, err := child.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := child.StdoutPipe()
	if err != nil {
		return err
	}
	if err := child.Start(); err != nil {
		return err
	}
	defer func() {
		stdin.Close() // the child exits
		_ = child.Wait()
	}()
	addr, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		return fmt.Errorf("the accepting child did not start: %w", err)
	}
	return dialAll(addr[:len(addr)-1], n, parallel)
}

// dialAll dials n connections to addr, parallel at a time, holds them until
// the last has opened, and prints the rate.
func dialAll(addr string, n, parallel int) error {
	var next atomic.Int64
	var mu sync.Mutex // guards failed and firstErr
	var failed int
	var firstErr error
	conns := make([]net.Conn, n)
	var wg sync.WaitGroup
	start := time.Now()
	for range parallel {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				c, err := net.DialTimeout("tcp", addr, 10*time.Second)
				if err != nil {
					mu.Lock()
					if failed++; firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					continue
				}
				conns[i] = c
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	for _, c := range conns {
		if c != nil {
			// A reset leaves no TIME_WAIT entry to hold the port from
			// the next run of the benchmark.
			_ = c.(*net.TCPConn).SetLinger(0)
			c.Close()
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d dials failed, the first: %w", failed, n, firstErr)
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]any{
		"conns":           n,
		"seconds":         elapsed.Seconds(),
		"connects_per_s":  float64(n) / elapsed.Seconds(),
		"dials_in_flight": parallel,
	})
}
