//go:build !unix

package harness

import "os"

// labDir is the folder an OpenVPN lab writes its keys and configurations
// into. OpenVPN labs run on Linux only; elsewhere it is a plain folder.
type labDir struct{ path string }

func newLabDir() (*labDir, error) {
	path, err := os.MkdirTemp("", labDirPattern)
	if err != nil {
		return nil, err
	}
	return &labDir{path: path}, nil
}

func (d *labDir) remove() error { return os.RemoveAll(d.path) }
