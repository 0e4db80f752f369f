package httpserve

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// h2Request is an HTTP/2 client's opening: the preface, its SETTINGS and
// a request with the given content type.
func h2Request(contentType string) []byte {
	var out, block bytes.Buffer
	out.WriteString(http2.ClientPreface)
	fr := http2.NewFramer(&out, nil)
	_ = fr.WriteSettings()
	enc := hpack.NewEncoder(&block)
	for _, h := range [][2]string{{":method", "POST"}, {":scheme", "http"}, {":authority", "x"}, {":path", "/grpc.health.v1.Health/Check"}, {"content-type", contentType}} {
		_ = enc.WriteField(hpack.HeaderField{Name: h[0], Value: h[1]})
	}
	_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block.Bytes(), EndHeaders: true})
	return out.Bytes()
}

// A refusal, whatever the client sends first, ends and answers: an
// HTTP/2 preface with SETTINGS first and a GOAWAY last, anything else with
// the 503.
func FuzzRefusal(f *testing.F) {
	f.Add([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	f.Add([]byte(""))
	f.Add([]byte("PRI * HTTP/2.0\r\n"))
	f.Add([]byte(http2.ClientPreface))
	f.Add(h2Request("application/grpc"))
	f.Add(h2Request("text/plain"))
	f.Add(append([]byte(http2.ClientPreface), "\x00\x00\x05\x01\x05\x00\x00\x00\x01\xff\xff\xff\xff\xff"...))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Fatal(err)
	}
	defer ln.Close()
	l := newLimitListener(ln, 2, nil)
	f.Fuzz(func(t *testing.T, in []byte) {
		client, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer client.Close()
		server, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		answered := make(chan struct{})
		go func() {
			defer close(answered)
			l.answer(server)
			server.Close()
		}()
		_ = client.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := client.Write(in); err != nil {
			t.Fatal(err)
		}
		_ = client.(*net.TCPConn).CloseWrite()
		out, err := io.ReadAll(client)
		<-answered
		if err != nil {
			t.Fatalf("reading the answer: %v", err)
		}
		if !bytes.HasPrefix(in, []byte(http2.ClientPreface)) {
			resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(out)), nil)
			if err != nil || resp.StatusCode != http.StatusServiceUnavailable {
				t.Fatalf("answered %q, want the 503", out)
			}
			return
		}
		fr := http2.NewFramer(nil, bytes.NewReader(out))
		var frames []http2.Frame
		for {
			f, err := fr.ReadFrame()
			if err != nil {
				break
			}
			frames = append(frames, f)
		}
		if len(frames) < 2 {
			t.Fatalf("answered %q, want SETTINGS, then GOAWAY", out)
		}
		if _, ok := frames[0].(*http2.SettingsFrame); !ok {
			t.Errorf("first frame %v, want SETTINGS", frames[0])
		}
		if ga, ok := frames[len(frames)-1].(*http2.GoAwayFrame); !ok || string(ga.DebugData()) != l.msg {
			t.Errorf("last frame %v, want GOAWAY saying %q", frames[len(frames)-1], l.msg)
		}
	})
}
