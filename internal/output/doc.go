// Package output is how every command writes a result file: through a
// temporary file next to it, renamed into place, so an interrupted run never
// leaves half a file; with mode 0666 before the umask (0644 under the usual
// 022), because results are for sharing. The report writers themselves take
// an io.Writer; [File] gives them their file. [StackPNG] draws plots one
// above the other into a PNG, the one way the reports make an image;
// [StackPNGKey] draws a figure's [Key] once above them.
package output
