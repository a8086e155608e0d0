-- Flink SQL tables for the topics of ingest pipeline quickstart (upsert-kafka sink).
-- Types: docs/output.md, "The consumer's side".

-- topic demo.customers: demo.customers
CREATE TABLE `demo.customers` (
  `id` INT,
  `name` STRING,
  `email` STRING,
  `vip` BOOLEAN,
  `signed_up` TIMESTAMP_LTZ(3),
  PRIMARY KEY (`id`) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = 'demo.customers',
  'properties.bootstrap.servers' = '127.0.0.1:9092',
  'key.format' = 'json',
  'key.json.timestamp-format.standard' = 'SQL',
  'value.format' = 'json',
  'value.json.timestamp-format.standard' = 'SQL'
);

-- topic demo.order_lines: demo.order_lines
CREATE TABLE `demo.order_lines` (
  `order_id` INT,
  `line_no` SMALLINT,
  `product_id` INT,
  `qty` INT,
  PRIMARY KEY (`order_id`, `line_no`) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = 'demo.order_lines',
  'properties.bootstrap.servers' = '127.0.0.1:9092',
  'key.format' = 'json',
  'key.json.timestamp-format.standard' = 'SQL',
  'value.format' = 'json',
  'value.json.timestamp-format.standard' = 'SQL'
);

-- topic demo.products: demo.products
CREATE TABLE `demo.products` (
  `id` INT,
  `title` STRING,
  `price` DECIMAL(10,2),
  `tags` STRING,
  `attrs` STRING,
  PRIMARY KEY (`id`) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = 'demo.products',
  'properties.bootstrap.servers' = '127.0.0.1:9092',
  'key.format' = 'json',
  'key.json.timestamp-format.standard' = 'SQL',
  'value.format' = 'json',
  'value.json.timestamp-format.standard' = 'SQL'
);

-- topic orders: shop_1.orders, shop_2.orders
CREATE TABLE `orders` (
  `id` BIGINT,
  `customer_id` INT,
  `total` DECIMAL(12,2),
  `placed` TIMESTAMP(3),
  PRIMARY KEY (`id`) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = 'orders',
  'properties.bootstrap.servers' = '127.0.0.1:9092',
  'key.format' = 'json',
  'key.json.timestamp-format.standard' = 'SQL',
  'value.format' = 'json',
  'value.json.timestamp-format.standard' = 'SQL'
);
