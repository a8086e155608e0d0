// Package examples holds real pipeline files, one directory per scenario,
// each documented in its comments:
//
//   - quickstart: every table of a local MariaDB database, one topic each
//   - sharded: routes that merge sharded tables, replace-symbol, a key override
//   - exactly-once: Kafka transactions with SASL/SCRAM
//   - apsaramq: ApsaraMQ for Kafka (Alibaba Cloud) with the aliyun.kafka.* options
//   - flinkcdc-kafka: type kafka (Flink CDC's Kafka sink): Flink CDC's quickstart file,
//     debezium-json and canal-json change events
//
// The tests load every examples/*/pipeline.yaml and examples/flinkcdc-kafka/*.yaml and run `ingest validate`
// on it, so an example that stops being valid fails the build.
package examples
