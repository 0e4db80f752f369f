package rate_test

import (
	"fmt"

	"github.com/tunnelprobe/tunnelprobe/loadgen/rate"
)

func ExampleParse() {
	for _, s := range []string{"20mbit", "5MB/s", "1500", "unlimited"} {
		r, err := rate.Parse(s)
		fmt.Println(r, int64(r), err)
	}
	fmt.Println(2 * rate.Mbit)
	// Output:
	// 20mbit 20000000 <nil>
	// 40mbit 40000000 <nil>
	// 1500bit 1500 <nil>
	// unlimited 0 <nil>
	// 2mbit
}
