package sink

import (
	"bufio"
	"bytes"
	"io"
	"testing"
)

// FuzzReadHeader checks that telling a header from raw data never loses
// or invents a byte.
func FuzzReadHeader(f *testing.F) {
	f.Add([]byte("TPSK\x01u\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00payload"))
	f.Add([]byte("TPS"))
	f.Add([]byte("GET / HTTP/1.1\r\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		br := bufio.NewReaderSize(bytes.NewReader(in), HeaderSize)
		_, ok, err := readHeader(br)
		if err != nil {
			return
		}
		rest, _ := io.ReadAll(br)
		want := in
		if ok {
			want = in[HeaderSize:]
		}
		if !bytes.Equal(rest, want) {
			t.Fatalf("ok=%v: data after header = %q, want %q", ok, rest, want)
		}
	})
}
