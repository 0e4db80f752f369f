package harness

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/netns"
)

// openvpnReady is the line openvpn prints once its tunnel is up: the
// client has its address and routes, the server listens.
const openvpnReady = "Initialization Sequence Completed"

// openvpnStopGrace is how long a stopped openvpn may take to exit (it
// tells the server on its way out) before it is killed.
const openvpnStopGrace = 3 * time.Second

// openvpnLogLines is how much of its output a process keeps for errors.
const openvpnLogLines = 20

// openvpnProcess is one run of the openvpn program in a namespace: it is
// ready once it prints openvpnReady, and done when it exits.
type openvpnProcess struct {
	cmd   *exec.Cmd
	ready chan struct{} // closed at openvpnReady
	done  chan struct{} // closed once it exited and its output was read
	err   error         // how it exited; set before done closes

	mu      sync.Mutex
	tail    []string // its last output lines
	stopped bool     // stopped by stop, not of its own accord
}

// startOpenVPN starts binary with the configuration file conf in ns (nil:
// this process's namespace). The
// process is killed if this one dies (Pdeathsig), so that not even a
// SIGKILL leaves an openvpn behind.
func startOpenVPN(ns *netns.NS, binary, conf string) (*openvpnProcess, error) {
	p := &openvpnProcess{ready: make(chan struct{}), done: make(chan struct{})}
	p.cmd = exec.Command(binary, "--config", conf)
	p.cmd.SysProcAttr = dieWithParent()
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p.cmd.Stderr = p.cmd.Stdout
	// Forked from a thread in ns, the process starts there.
	if err := inNS(ns, p.cmd.Start); err != nil {
		return nil, fmt.Errorf("harness: start %s: %w", binary, err)
	}
	go p.follow(out)
	return p, nil
}

// follow reads the output until the process exits, then waits for it.
func (p *openvpnProcess) follow(out io.Reader) {
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		p.mu.Lock()
		p.tail = append(p.tail, line)
		if len(p.tail) > openvpnLogLines {
			p.tail = p.tail[1:]
		}
		p.mu.Unlock()
		if strings.Contains(line, openvpnReady) {
			select {
			case <-p.ready:
			default:
				close(p.ready)
			}
		}
	}
	_, _ = io.Copy(io.Discard, out)
	p.err = p.cmd.Wait()
	close(p.done)
}

// waitReady waits until the process is ready, has exited, or ctx ends.
func (p *openvpnProcess) waitReady(ctx context.Context) error {
	select {
	case <-p.ready:
		return nil
	case <-p.done:
		return fmt.Errorf("harness: openvpn exited (%v) before its tunnel was up: %s", p.err, p.output())
	case <-ctx.Done():
		return fmt.Errorf("harness: openvpn's tunnel not up (%w): %s", ctx.Err(), p.output())
	}
}

// output is the process's last lines of output, for an error.
func (p *openvpnProcess) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.tail) == 0 {
		return "no output"
	}
	return "its last output: " + strings.Join(p.tail, " | ")
}

// stop asks the process to exit (SIGTERM, as a container stop does), kills
// it after openvpnStopGrace and waits until it is gone.
func (p *openvpnProcess) stop() {
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(openvpnStopGrace)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// crashed reports, once the process is done, whether it exited on its own
// (was not stopped), and how.
func (p *openvpnProcess) crashed() (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return false, nil
	}
	if p.err == nil {
		return true, errors.New("openvpn exited")
	}
	return true, fmt.Errorf("openvpn: %w", p.err)
}
