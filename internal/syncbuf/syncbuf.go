// Package syncbuf is a bytes.Buffer safe for concurrent use, for tests that
// collect what several goroutines log or print.
package syncbuf

import (
	"bytes"
	"io"
	"sync"
)

// Buffer is a bytes.Buffer behind a mutex. The zero value is an empty
// buffer ready to use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Reset empties the buffer.
func (b *Buffer) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.b.Reset()
}

// Writer serialises writes from several goroutines (children's stderr
// copiers, a progress line) to W.
type Writer struct {
	mu sync.Mutex
	W  io.Writer
}

// Write writes p to W, one call at a time.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.W.Write(p)
}
