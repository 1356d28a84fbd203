// Package redisconn opens the Redis the configuration names, in any topology go-redis
// serves: one node, a Redis Cluster, or a primary managed by Sentinel, each given as a URL
// in go-redis's own form (redis.ParseURL, redis.ParseClusterURL, redis.ParseFailoverURL,
// with rediss:// for TLS and credentials in the URL). It also says whether the Redis can
// serve now: whether every primary that holds data answers.
//
// Open makes the client (go-redis's universal client: *redis.Client for a node or a
// Sentinel-managed primary, *redis.ClusterClient for a cluster); Validate checks a
// configuration at start-up and names the flag that is wrong; Ready is the readiness
// check; Ack makes a write wait until replicas have it (WAIT on the connection that made
// it), so that a failover cannot take back what a client was told.
package redisconn
