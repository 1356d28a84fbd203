// Package metrics records the work of the service in Prometheus metrics
// (prometheus/client_golang) and serves them in the Prometheus text format. A nil
// *Metrics records nothing, so the service's code calls it unconditionally.
//
// The metrics, all prefixed genui_:
//
//	http_requests_total{route,transport,code}          requests answered
//	http_request_duration_seconds{route,transport}     time to answer a request (the whole stream)
//	turns_total{status}                                turns ended: ok, or the error's status
//	time_to_first_surface_seconds                      from a turn's start to its first UI
//	stream_duration_seconds                            from a streamed turn's start to its end
//	model_request_duration_seconds{provider}           one model call
//	model_errors_total{provider,status}                model calls that failed
//	model_retries_total{provider}                      model calls retried after 429/503
//	model_tokens_total{direction}                      tokens in and out
//	surfaces_total{outcome}                            UI streamed, rejected (invalid), repaired
//	client_tool_calls_total                            calls of client tools sent to clients
//	policy_violations_total{rule}                      what the UI policy held back from clients
//	turn_limits_total{limit}                           turns that ended at a limit on what a model writes
//	limited_total{limit}                               requests refused by a limit
//	catalog_cache_lookups_total{result}                hit or miss
//	catalog_cache_bytes                                estimated bytes of the compiled catalogs
//	open_streams                                       turns streaming in this process
//	open_connections{transport}                        open WebSocket connections
//	waiting_sessions                                   WebSocket sessions waiting for their client
//	redis_errors_total                                 failed Redis commands
//
// plus the Go runtime's and the process's (go_*, process_*).
//
// This package is the service's own: its API serves the genui server and may change
// from one release to the next. The packages meant for import are a2ui, catalog, policy
// and schemas.
package metrics
