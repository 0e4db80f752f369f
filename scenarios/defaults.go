package scenarios

import (
	"fmt"
	"time"
)

// fillDefault gives a prober setting its default when it is zero; a
// negative setting is an error naming the field, added to errs.
func fillDefault[T time.Duration | int](errs *[]error, name string, v *T, def T) {
	switch {
	case *v < 0:
		*errs = append(*errs, fmt.Errorf("%s must not be negative, got %v", name, *v))
	case *v == 0:
		*v = def
	}
}
