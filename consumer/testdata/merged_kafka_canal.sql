-- Flink SQL tables for the topics of ingest pipeline shops (kafka sink).
-- Types: docs/output.md, "The consumer's side".

-- topic orders: shop_1.orders, shop_2.orders
CREATE TABLE `orders` (
  `id` BIGINT,
  `total` STRING,  -- types differ: shop_1.orders DECIMAL(12,2), shop_2.orders DOUBLE - STRING reads every JSON value
  `took` BIGINT,  -- TIME as signed microseconds (json.encode.time-as: micros)
  `note` STRING,  -- in 1 of the 2 tables (NULL in the others)
  PRIMARY KEY (`id`) NOT ENFORCED
) WITH (
  'connector' = 'kafka',
  'topic' = 'orders',
  'properties.bootstrap.servers' = 'b1:9092',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'canal-json',
  'canal-json.timestamp-format.standard' = 'ISO-8601'
);
