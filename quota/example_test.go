package quota_test

import (
	"fmt"

	"github.com/genuiserver/genui/quota"
)

func ExampleQuota() {
	q := quota.New(quota.Limits{Streams: 1, Sessions: 2})

	release, err := q.StartTurn("caller-a")
	fmt.Println(err == nil, q.Running())

	// A second turn of the same caller while the first runs.
	_, err = q.StartTurn("caller-a")
	fmt.Println(err.Limit, err.RetryAfterSeconds())
	fmt.Println(err)

	release()
	fmt.Println(q.Running())

	for range 3 {
		if err := q.NewSession("caller-a"); err != nil {
			fmt.Println(err.Limit, err.RetryAfter > 0)
		}
	}
	// Output:
	// true 1
	// streams 1
	// limit: at most 1 turns of one caller at once; retry when one ends
	// 0
	// sessions true
}
