// Package examples holds real pipeline files, one directory per scenario,
// each documented in its comments:
//
//   - quickstart: every table of a local MariaDB database, one topic each
//   - sharded: routes that merge sharded tables, replace-symbol, a key override
//   - exactly-once: Kafka transactions with SASL/SCRAM
//   - apsaramq: ApsaraMQ for Kafka (Alibaba Cloud) with the aliyun.kafka.* options
//   - flinkcdc-kafka: type kafka (Flink CDC's Kafka sink): Flink CDC's quickstart file,
//     debezium-json and canal-json change events
//   - flinkcdc-transform: published Flink CDC jobs that use transform (Flink CDC's README
//     pipeline, the metadata-columns pipeline of its transform documentation, the
//     SOFT_DELETE job of its end-to-end tests), each naming its source and what was
//     adapted; runner/transform_integration_test.go runs the SOFT_DELETE one
//
// The tests load every examples/*/pipeline.yaml, examples/flinkcdc-kafka/*.yaml and
// examples/flinkcdc-transform/*.yaml and run `ingest validate` on it, so an example that
// stops being valid fails the build.
package examples
