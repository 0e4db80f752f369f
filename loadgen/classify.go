package loadgen

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
)

// Error kinds, as in [ErrorKinds] and Result.Errors.
const (
	KindRefused             = "refused"
	KindTimeout             = "timeout"
	KindReset               = "reset"
	KindTooManyOpenFiles    = "too_many_open_files"
	KindAddressNotAvailable = "address_not_available"
	KindOther               = "other"
)

// Classify returns the kind of a failed dial or of the error that broke a
// connection:
//
//   - "refused": ECONNREFUSED.
//   - "timeout": a deadline (os.ErrDeadlineExceeded, context.DeadlineExceeded,
//     any net.Error whose Timeout is true) or ETIMEDOUT.
//   - "reset": the peer ended the connection: ECONNRESET, EPIPE,
//     ECONNABORTED, and also io.EOF and io.ErrUnexpectedEOF (the peer
//     closed it in the middle of the run).
//   - "too_many_open_files": EMFILE, ENFILE.
//   - "address_not_available": EADDRNOTAVAIL, EADDRINUSE (no free source
//     port or address to bind).
//   - "other": anything else, nil included.
func Classify(err error) string {
	switch {
	case err == nil:
		return KindOther
	case errors.Is(err, syscall.ECONNREFUSED):
		return KindRefused
	case errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE):
		return KindTooManyOpenFiles
	case errors.Is(err, syscall.EADDRNOTAVAIL), errors.Is(err, syscall.EADDRINUSE):
		return KindAddressNotAvailable
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, syscall.ECONNABORTED),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return KindReset
	case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, syscall.ETIMEDOUT):
		return KindTimeout
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return KindTimeout
	}
	return KindOther
}

// kindIndex returns the index of kind in ErrorKinds, which counters use.
func kindIndex(kind string) int {
	for i, k := range ErrorKinds {
		if k == kind {
			return i
		}
	}
	return len(ErrorKinds) - 1 // "other"
}
