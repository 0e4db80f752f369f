package server_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
	"github.com/tunnelprobe/tunnelprobe/middleware/server"
)

// A Server runs a monitor's loop and endpoints on a listener until its
// context ends, as `tunnelprobe serve` does.
func ExampleServer() {
	checker := check.Func(func(context.Context) error { return nil }) // a tunnel that works
	srv, err := server.New(checker, server.Config{Monitor: middleware.Config{Mode: middleware.ModeProbe}, Metrics: true})
	if err != nil {
		panic(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()

	resp, err := http.Get("http://" + ln.Addr().String() + "/check/")
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Print(resp.StatusCode, " ", string(body))

	resp, err = http.Get("http://" + ln.Addr().String() + server.MetricsPath)
	if err != nil {
		panic(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, strings.Contains(string(body), `tunnelprobe_checks_total{result="pass",source="probe"} 1`))

	stop()
	fmt.Println("Serve returned", <-done)
	// Output:
	// 200 pass
	// 200 true
	// Serve returned <nil>
}

// HealCommand heals by a shell command, here one that restarts a VPN.
func ExampleHealCommand() {
	heal := server.HealCommand("echo restarting the VPN", nil)
	mon, err := middleware.New(check.Func(func(context.Context) error { return nil }),
		middleware.Config{Heal: heal})
	fmt.Println(mon != nil, err, heal(context.Background()))
	// Output: true <nil> <nil>
}
