package redisconn

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Topology names how the data is served.
type Topology string

// The topologies.
const (
	Single   Topology = "single"
	Cluster  Topology = "cluster"
	Sentinel Topology = "sentinel"
)

// Config names the Redis: at most one of its URLs is set.
type Config struct {
	// URL is one node: redis://[user:password@]host:port[/db], rediss://… (TLS) or
	// unix:///path.
	URL string
	// ClusterURL is a Redis Cluster, by seed nodes:
	// redis://[user:password@]host:port?addr=host2:port&addr=host3:port.
	ClusterURL string
	// SentinelURL is a primary Sentinel watches:
	// redis://[sentinel-user:sentinel-password@]host:26379?addr=host2:26379&master_name=mymaster[&password=…].
	SentinelURL string
}

// Flags name each field in errors.
var Flags = struct{ URL, ClusterURL, SentinelURL string }{"redis-url", "redis-cluster-url", "redis-sentinel-url"}

// FlagError is a configuration problem, naming its flag.
type FlagError struct {
	Flag string
	Err  error
}

func (e *FlagError) Error() string { return "--" + e.Flag + ": " + e.Err.Error() }
func (e *FlagError) Unwrap() error { return e.Err }

// Set reports whether the configuration names a Redis.
func (c Config) Set() bool { return c.URL != "" || c.ClusterURL != "" || c.SentinelURL != "" }

// Topology is the topology the configuration names ("" when none).
func (c Config) Topology() Topology {
	switch {
	case c.ClusterURL != "":
		return Cluster
	case c.SentinelURL != "":
		return Sentinel
	case c.URL != "":
		return Single
	}
	return ""
}

// Defaults of every topology's connections: a server that starts while Redis is down
// reports itself not ready and recovers alone; each stream being tailed holds a
// connection while it waits for events.
const (
	dialTimeout = 2 * time.Second
	ioTimeout   = 3 * time.Second
	minPool     = 512
	// A node that refuses connections (down, or failed over) is told to the request
	// within about a quarter of a second, rather than after go-redis's default five dials
	// 100 ms apart for each of the command's four tries (about 1.7 s).
	dialerRetries      = 2
	dialerRetryTimeout = 50 * time.Millisecond
	stateReload        = time.Second
)

// Validate checks the configuration as go-redis reads it, and returns a *FlagError.
// A configuration that names no Redis is valid: the service then keeps its state in
// memory.
func (c Config) Validate() error {
	if !c.Set() {
		return nil
	}
	_, err := c.open(false)
	return err
}

// Open returns a client of the Redis the configuration names. It connects lazily.
func Open(c Config) (redis.UniversalClient, error) { return c.open(true) }

// open parses the configuration and, when connect is set, makes its client.
func (c Config) open(connect bool) (redis.UniversalClient, error) {
	n := 0
	for _, u := range []string{c.URL, c.ClusterURL, c.SentinelURL} {
		if u != "" {
			n++
		}
	}
	if n > 1 {
		return nil, &FlagError{Flags.URL, errors.New("name one Redis: --redis-url (one node), --redis-cluster-url (a Redis Cluster) or --redis-sentinel-url (a Sentinel-managed primary)")}
	}
	switch c.Topology() {
	case Single:
		o, err := redis.ParseURL(c.URL)
		if err != nil {
			return nil, &FlagError{Flags.URL, fmt.Errorf("%v; expected redis://[user:password@]host:port[/db], rediss://… (TLS) or unix:///path", cleanErr(err))}
		}
		if !connect {
			return nil, nil
		}
		defaults(connOptions{&o.DialTimeout, &o.ReadTimeout, &o.WriteTimeout, &o.DialerRetryTimeout, &o.PoolSize, &o.DialerRetries})
		return redis.NewClient(o), nil
	case Cluster:
		o, err := redis.ParseClusterURL(c.ClusterURL)
		if err != nil {
			return nil, &FlagError{Flags.ClusterURL, fmt.Errorf("%v; expected redis://[user:password@]host:port?addr=host2:port&addr=host3:port, or rediss://… (TLS)", cleanErr(err))}
		}
		if !connect {
			return nil, nil
		}
		defaults(connOptions{&o.DialTimeout, &o.ReadTimeout, &o.WriteTimeout, &o.DialerRetryTimeout, &o.PoolSize, &o.DialerRetries})
		// A master that crashes answers no MOVED: the slot map is read again every
		// second, so that the replica that took over is found within a second of it.
		o.ClusterStateReloadInterval = stateReload
		return redis.NewClusterClient(o), nil
	case Sentinel:
		o, err := redis.ParseFailoverURL(c.SentinelURL)
		if err == nil && o.MasterName == "" {
			err = errors.New("no master_name: the name Sentinel knows the primary by")
		}
		if err != nil {
			return nil, &FlagError{Flags.SentinelURL, fmt.Errorf("%v; expected redis://[user:password@]sentinel:26379?addr=sentinel2:26379&master_name=mymaster[&password=…], or rediss://… (TLS)", cleanErr(err))}
		}
		if !connect {
			return nil, nil
		}
		defaults(connOptions{&o.DialTimeout, &o.ReadTimeout, &o.WriteTimeout, &o.DialerRetryTimeout, &o.PoolSize, &o.DialerRetries})
		return redis.NewFailoverClient(o), nil
	}
	return nil, errors.New("no Redis configured")
}

// connOptions are the fields of every topology's options that defaults sets.
type connOptions struct {
	dial, read, write, dialerRetryTimeout *time.Duration
	pool, dialerRetries                   *int
}

// defaults sets the timeouts, dial retries and pool size the URL leaves unset.
func defaults(o connOptions) {
	for _, d := range []struct {
		p *time.Duration
		v time.Duration
	}{{o.dial, dialTimeout}, {o.read, ioTimeout}, {o.write, ioTimeout}, {o.dialerRetryTimeout, dialerRetryTimeout}} {
		if *d.p == 0 {
			*d.p = d.v
		}
	}
	if *o.dialerRetries == 0 {
		*o.dialerRetries = dialerRetries
	}
	*o.pool = max(*o.pool, minPool)
}

// cleanErr strips go-redis's own prefix.
func cleanErr(err error) string {
	// url.Parse's error quotes the URL, and with it any password: keep the reason.
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return strings.TrimPrefix(err.Error(), "redis: ")
}

// Ready reports whether the Redis can serve: the node answers; every master of a
// cluster answers and the cluster serves all its slots; Sentinel's primary answers.
func Ready(ctx context.Context, client redis.UniversalClient) error {
	cc, ok := client.(*redis.ClusterClient)
	if !ok {
		return client.Ping(ctx).Err()
	}
	info, err := cc.ClusterInfo(ctx).Result()
	if err != nil {
		return err
	}
	if !strings.Contains(info, "cluster_state:ok") {
		return errors.New("the cluster does not serve every slot (cluster_state is not ok)")
	}
	return cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
		return node.Ping(ctx).Err()
	})
}

// Describe says, for the logs, which Redis a client serves from: the topology and how
// many addresses it was given (not the addresses, which stay in the configuration).
func Describe(c Config) string {
	switch c.Topology() {
	case Cluster:
		o, err := redis.ParseClusterURL(c.ClusterURL)
		if err == nil {
			return fmt.Sprintf("a Redis Cluster (%d seed nodes)", len(o.Addrs))
		}
	case Sentinel:
		o, err := redis.ParseFailoverURL(c.SentinelURL)
		if err == nil {
			return fmt.Sprintf("the primary %q of %d sentinels", o.MasterName, len(o.SentinelAddrs))
		}
	case Single:
		return "one Redis node"
	}
	return string(c.Topology())
}

// Ack makes a write that a client is told of wait until replicas have it: Redis
// replication is asynchronous, and a primary that fails before its replica has a write
// takes the write with it. Replicas 0 (the default) waits for none.
type Ack struct {
	Replicas int
	Timeout  time.Duration
}

// ErrNotReplicated is the error of a write that fewer replicas acknowledged than asked
// for, in time: it was made on the primary, but may not survive a failover. It is a
// redis.Error of the kind NOREPLICAS, which callers treat as transient.
var ErrNotReplicated error = notReplicated{}

type notReplicated struct{}

func (notReplicated) Error() string {
	return "NOREPLICAS the write was not acknowledged by enough replicas in time"
}
func (notReplicated) RedisError() {}

// Do runs write on a connection of the primary that holds key and, when acknowledgements
// are on, waits on that connection (WAIT) until Replicas replicas have it, at most
// Timeout. Without acknowledgements write runs on client, which routes as usual.
func (a Ack) Do(ctx context.Context, client redis.UniversalClient, key string, write func(redis.Cmdable) error) error {
	if a.Replicas <= 0 {
		return write(client)
	}
	var primary *redis.Client
	switch c := client.(type) {
	case *redis.ClusterClient:
		var err error
		if primary, err = c.MasterForKey(ctx, key); err != nil {
			return err
		}
	case *redis.Client:
		primary = c
	default:
		return write(client)
	}
	conn := primary.Conn()
	defer conn.Close()
	if err := write(conn); err != nil {
		if cc, ok := client.(*redis.ClusterClient); ok && moved(err) {
			// The slot moved (a failover): the next write finds its new primary.
			cc.ReloadState(ctx)
		}
		return err
	}
	n, err := conn.Wait(ctx, a.Replicas, a.Timeout).Result()
	if err != nil {
		return err
	}
	if n < int64(a.Replicas) {
		return ErrNotReplicated
	}
	return nil
}

// moved reports an error that says a slot is served elsewhere now.
func moved(err error) bool {
	msg := err.Error()
	return strings.HasPrefix(msg, "MOVED") || strings.HasPrefix(msg, "ASK") || strings.HasPrefix(msg, "READONLY") || strings.HasPrefix(msg, "CLUSTERDOWN")
}
