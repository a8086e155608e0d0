-- Flink SQL tables for the topics of ingest pipeline shops (upsert-kafka sink).
-- Types: docs/output.md, "The consumer's side".

-- topic orders: shop_1.orders, shop_2.orders
CREATE TABLE `orders` (
  `id` BIGINT,
  `total` STRING,  -- types differ: shop_1.orders DECIMAL(12,2), shop_2.orders DOUBLE - STRING reads every JSON value
  `took` STRING,  -- TIME as text ([-]HH:mm:ss[.f], up to ±838:59:59) - Flink's TIME holds 00:00:00-23:59:59 and no fraction
  `note` STRING,  -- in 1 of the 2 tables (NULL in the others)
  PRIMARY KEY (`id`) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = 'orders',
  'properties.bootstrap.servers' = 'b1:9092,b2:9092',
  'properties.sasl.jaas.config' = '******',
  'properties.sasl.mechanism' = 'PLAIN',
  'properties.security.protocol' = 'SASL_SSL',
  'properties.isolation.level' = 'read_committed',
  'key.format' = 'json',
  'key.json.timestamp-format.standard' = 'SQL',
  'value.format' = 'json',
  'value.json.timestamp-format.standard' = 'SQL'
);
