// Package infile reads the files a command is given to read back, such as
// the reports a merge adds up, bounded: [Read] takes regular files only (a
// symbolic link is followed to one) of at most a given size, checked before
// a byte is read, so that a device, a pipe or a file far larger than any
// the command writes costs no memory. It is the one way a command reads
// such a file.
package infile
