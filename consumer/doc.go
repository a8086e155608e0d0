// Package consumer writes what a consumer of ingest's topics must declare to read them:
// for each topic, the Flink SQL type of every captured column (a CREATE TABLE for
// Flink's upsert-kafka connector, or its kafka connector with debezium-json or canal-json
// for the kafka sink) and a JSON Schema of the record values. The types follow the wire
// contract of docs/output.md ("The consumer's side"), and the DDL is what
// cmd/ingest's consumer test runs in a real Flink job.
//
// The input is the live schema that ingest plan describes: each topic with the tables
// routed to it, after routes and transforms. A topic that merges tables gets the union of
// their columns.
package consumer
