// Package infile reads the files a command is given to read back, such as
// the reports a merge adds up, bounded: [Read] takes regular files only (a
// symbolic link is followed to one) of at most a given size, checked before
// a byte is read, so that a device, a pipe or a file far larger than any
// the command writes costs no memory; [Stat] checks the same without
// reading. It is the one way a command reads such a file.
//
// Its functions start no goroutine, are safe for concurrent use, and close
// every file they open.
package infile
