package redisconn_test

import (
	"fmt"

	"github.com/genuiserver/genui/internal/redisconn"
)

// A configuration is checked before anything connects, and its error names the flag.
func ExampleConfig_Validate() {
	for _, cfg := range []redisconn.Config{
		{ClusterURL: "redis://10.0.0.1:7000?addr=10.0.0.2:7000&addr=10.0.0.3:7000"},
		{SentinelURL: "redis://10.0.0.1:26379?addr=10.0.0.2:26379"},
	} {
		fmt.Println(redisconn.Describe(cfg), "→", redisconn.Config.Validate(cfg))
	}
	// Output:
	// a Redis Cluster (3 seed nodes) → <nil>
	// the primary "" of 2 sentinels → --redis-sentinel-url: no master_name: the name Sentinel knows the primary by; expected redis://[user:password@]sentinel:26379?addr=sentinel2:26379&master_name=mymaster[&password=…], or rediss://… (TLS)
}
