// Package runner joins a validated pipeline definition to its parts and runs them: the
// binlog source (package cdc), the routes (package route) and the Kafka sink (package
// upsert), with the state store (package state) and the metrics.
//
// Data flows through two bounded channels, source → forwarder → sink, so a slow broker
// slows the binlog reader instead of filling memory. The position advances only when the
// sink reports a source transaction acknowledged (at-least-once) or committed with it
// (exactly-once); the local store then writes it atomically. Every long-lived part runs in
// one errgroup and no goroutine outlives Run.
package runner
