// Package enum is the one way the project's small enumerations (a monitor's
// mode, a load's direction, a probe's type) read and write as text: each
// value has one lower-case name, read in any case.
package enum

import (
	"fmt"
	"strings"
)

// Name returns names[v], or typ(v) for a value without a name.
func Name[T ~int](typ string, names []string, v T) string {
	if v >= 0 && int(v) < len(names) {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", typ, int(v))
}

// Parse returns the value named s, in any case; the error names what was
// asked for and lists the names.
func Parse[T ~int](what string, names []string, s string) (T, error) {
	for v, name := range names {
		if strings.EqualFold(s, name) {
			return T(v), nil
		}
	}
	return 0, fmt.Errorf("unknown %s %q: want %s", what, s, list(names))
}

// list joins names as "a, b or c".
func list(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
