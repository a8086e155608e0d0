// Package fleet runs many pipelines on many workers (`ingest serve`): the workers of a
// group coordinate through the Kafka cluster they write to, with Kafka's group membership
// for the assignment and Kafka transactions for the fencing, as Kafka Connect's
// distributed workers do. There is no coordinator of ingest's own.
//
// Every worker of a group is given the same pipeline files ([Set]). The group is a Kafka
// consumer group (its id is the group name) over a small internal topic,
// __ingest_fleet_<group>, with one partition per pipeline: partition i stands for the i-th
// pipeline in the order of their names, and nothing is ever written to it. The members
// balance its partitions with cooperative-sticky rebalancing wrapped by [Balancer], whose
// member metadata carries the hash of the member's pipeline set: the leader refuses members
// whose set differs from the group's, and they exit with an error naming both sets.
//
// A pipeline is started when its partition is assigned and stopped (its position stored)
// when it is revoked; under cooperative rebalancing a pipeline that moves is revoked from
// its old owner before it is assigned to the new one. When an owner dies, its session times
// out and its pipelines are assigned elsewhere; the new owner fences the old one by the
// pipeline's transactional id (exactly-once; see upsert/txn.go) before it reads the
// committed position. At-least-once pipelines have no such fence and are refused (see
// docs/scaling.md).
package fleet
