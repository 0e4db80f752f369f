package sink

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
)

// Mode says what the sink does with a connection; a client picks it in its
// header.
type Mode byte

// The modes. A connection without a header gets ModeUpload, or ModeEcho on
// a [Server] with Echo set.
const (
	// ModeUpload: the sink reads and discards; it sends nothing.
	ModeUpload Mode = 'u'
	// ModeDownload: the sink sends at the header's rate; it also reads
	// and discards whatever the client sends.
	ModeDownload Mode = 'd'
	// ModeBoth: the sink discards what it reads and sends at the
	// header's rate, both at once.
	ModeBoth Mode = 'b'
	// ModeEcho: the sink writes back what it reads.
	ModeEcho Mode = 'e'
)

// String returns the mode's name: "upload", "download", "both" or "echo".
func (m Mode) String() string {
	switch m {
	case ModeUpload:
		return "upload"
	case ModeDownload:
		return "download"
	case ModeBoth:
		return "both"
	case ModeEcho:
		return "echo"
	}
	return fmt.Sprintf("Mode(%q)", byte(m))
}

func (m Mode) valid() bool {
	switch m {
	case ModeUpload, ModeDownload, ModeBoth, ModeEcho:
		return true
	}
	return false
}

// Header layout; see the package documentation.
const (
	// Magic opens a header.
	Magic = "TPSK"
	// Version is the protocol version this package speaks.
	Version = 1
	// HeaderSize is the length of a header in bytes.
	HeaderSize = 16
)

// Header is the optional first message of a client.
type Header struct {
	Mode Mode
	// BytesPerSecond is the rate the sink sends at in ModeDownload and
	// ModeBoth; 0 means as fast as the connection takes it.
	BytesPerSecond uint64
}

// AppendBinary appends the 16-byte encoding of h to b.
func (h Header) AppendBinary(b []byte) ([]byte, error) {
	if !h.Mode.valid() {
		return b, fmt.Errorf("sink: invalid mode %v", h.Mode)
	}
	b = append(b, Magic...)
	b = append(b, Version, byte(h.Mode), 0, 0)
	return binary.BigEndian.AppendUint64(b, h.BytesPerSecond), nil
}

// WriteHeader writes the header that asks the sink for mode at
// bytesPerSecond (0: as fast as possible) to w, in one Write.
func WriteHeader(w io.Writer, mode Mode, bytesPerSecond uint64) error {
	b, err := Header{Mode: mode, BytesPerSecond: bytesPerSecond}.AppendBinary(make([]byte, 0, HeaderSize))
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// ParseHeader decodes a 16-byte header.
func ParseHeader(b []byte) (Header, error) {
	if len(b) < HeaderSize {
		return Header{}, fmt.Errorf("sink: header is %d bytes, want %d", len(b), HeaderSize)
	}
	if string(b[:4]) != Magic {
		return Header{}, fmt.Errorf("sink: header does not start with %q", Magic)
	}
	if b[4] != Version {
		return Header{}, fmt.Errorf("sink: unsupported protocol version %d", b[4])
	}
	h := Header{Mode: Mode(b[5]), BytesPerSecond: binary.BigEndian.Uint64(b[8:16])}
	if !h.Mode.valid() {
		return Header{}, fmt.Errorf("sink: invalid mode %v", h.Mode)
	}
	return h, nil
}

// readHeader looks at the start of a connection through r. It returns
// ok=false, consuming nothing, as soon as the bytes received cannot be the
// start of Magic: a client that sends anything else, however short, is
// never kept waiting. Only a client whose first bytes are a proper prefix
// of Magic, and that then waits for an answer, would wait here; no real
// protocol begins so.
func readHeader(r *bufio.Reader) (h Header, ok bool, err error) {
	for i := 1; i <= len(Magic); i++ {
		b, err := r.Peek(i)
		if err != nil {
			// Fewer bytes than a prefix: data or not, the
			// connection ended; let the caller read what there is.
			return Header{}, false, nil
		}
		if b[i-1] != Magic[i-1] {
			return Header{}, false, nil
		}
	}
	b, err := r.Peek(HeaderSize)
	if err != nil {
		return Header{}, false, fmt.Errorf("sink: short header: %w", err)
	}
	h, err = ParseHeader(b)
	if err != nil {
		return Header{}, false, err
	}
	_, _ = r.Discard(HeaderSize)
	return h, true, nil
}
