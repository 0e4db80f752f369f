package enum

import "testing"

type color int

var colorNames = []string{"red", "green", "blue"}

func TestParseAndName(t *testing.T) {
	for _, s := range []string{"green", "GREEN", "Green"} {
		if c, err := Parse[color]("color", colorNames, s); err != nil || c != 1 {
			t.Errorf("Parse(%q) = %v, %v", s, c, err)
		}
	}
	_, err := Parse[color]("color", colorNames, "pink")
	if want := `unknown color "pink": want red, green or blue`; err == nil || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
	if got := Name("color", colorNames, color(2)); got != "blue" {
		t.Errorf("Name(2) = %q", got)
	}
	if got := Name("color", colorNames, color(7)); got != "color(7)" {
		t.Errorf("Name(7) = %q", got)
	}
}
