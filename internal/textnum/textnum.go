// Package textnum reads the numbers inside the lab's text values (rates,
// queue limits, loss) strictly, and the JSON forms those values take: a
// string, or a plain number.
package textnum

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ErrSyntax is wrapped by every error of the parsers built on this package,
// so that callers test for one sentinel whatever the value was.
var ErrSyntax = errors.New("invalid value")

// Decimal accepts a plain non-negative decimal number: no sign, no
// exponent, no hex, no underscores, so that "1e3mbit" or "0x10" are not
// silently read as something else.
func Decimal(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("missing number: %w", ErrSyntax)
	}
	dots := 0
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9':
		case c == '.':
			dots++
		default:
			return 0, fmt.Errorf("unknown unit or bad number: %w", ErrSyntax)
		}
	}
	if dots > 1 || s == "." {
		return 0, fmt.Errorf("bad number: %w", ErrSyntax)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("bad number: %w", ErrSyntax)
	}
	return v, nil
}

// JSONText returns a JSON string's contents or a number's text, for a
// value that reads a string or a bare number with one text parser.
func JSONText(b []byte) (string, error) {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		return s, nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return "", errors.New("want a string or a number")
	}
	return n.String(), nil
}
