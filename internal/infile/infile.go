package infile

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Stat returns name's file information, following symbolic links, and an
// error naming name unless it is a regular file of at most limit bytes;
// what names the kind of file in that error ("a matrix.json").
func Stat(name string, limit int64, what string) (fs.FileInfo, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	return fi, check(name, fi, limit, what)
}

// check refuses fi, the information of name, unless it is a regular file
// of at most limit bytes: /dev/zero never ends, and a pipe has no size to
// check.
func check(name string, fi fs.FileInfo, limit int64, what string) error {
	switch {
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s: %s, not a regular file as %s is", name, kind(fi.Mode()), what)
	case fi.Size() > limit:
		return fmt.Errorf("%s: %d bytes, more than the %d (%d MiB) %s can take", name, fi.Size(), limit, limit>>20, what)
	}
	return nil
}

// kind names what a file that is not a regular one is.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return m.Type().String()
}

// Read reads name, a regular file (a symbolic link is followed to one) of
// at most limit bytes, and returns its content and information; what names
// the kind of file in the errors ("a matrix.json"), which name name. The
// checks come before the first byte is read, and the buffer is sized by
// the file: its memory is the file's size. A file that grows while it is
// read is refused once it passes limit.
func Read(name string, limit int64, what string) ([]byte, fs.FileInfo, error) {
	if _, err := Stat(name, limit, what); err != nil {
		return nil, nil, err
	}
	// Non-blocking, so that a file swapped for a named pipe since Stat
	// does not hang the open waiting for a writer; Stat of the open file
	// then refuses it.
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err == nil {
		err = check(name, fi, limit, what)
	}
	if err != nil {
		return nil, nil, err
	}
	buf := bytes.NewBuffer(make([]byte, 0, fi.Size()+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(f, limit+1)); err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", name, err)
	}
	if int64(buf.Len()) > limit {
		return nil, nil, fmt.Errorf("%s: grew while read to more than the %d (%d MiB) bytes %s can take", name, limit, limit>>20, what)
	}
	return buf.Bytes(), fi, nil
}
