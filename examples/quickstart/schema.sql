-- The quickstart's demo data: a few tables of `demo` (one with a composite key) and an
-- orders table sharded over shop_1 and shop_2, which the pipeline's route merges into one
-- topic. `make demo` loads it (dropping what an earlier demo left).
DROP DATABASE IF EXISTS demo;
DROP DATABASE IF EXISTS shop_1;
DROP DATABASE IF EXISTS shop_2;
CREATE DATABASE demo;
CREATE DATABASE shop_1;
CREATE DATABASE shop_2;

CREATE TABLE demo.customers (
  id INT PRIMARY KEY,
  name VARCHAR(60) NOT NULL,
  email VARCHAR(120),
  vip BOOLEAN NOT NULL DEFAULT FALSE,
  signed_up TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3)
);
CREATE TABLE demo.products (
  id INT PRIMARY KEY,
  title VARCHAR(80) NOT NULL,
  price DECIMAL(10,2) NOT NULL,
  tags SET('new','sale','eco'),
  attrs JSON
);
CREATE TABLE demo.order_lines (
  order_id INT NOT NULL,
  line_no SMALLINT NOT NULL,
  product_id INT NOT NULL,
  qty INT NOT NULL,
  PRIMARY KEY (order_id, line_no)
);
CREATE TABLE shop_1.orders (id BIGINT PRIMARY KEY, customer_id INT, total DECIMAL(12,2), placed DATETIME(3));
CREATE TABLE shop_2.orders (id BIGINT PRIMARY KEY, customer_id INT, total DECIMAL(12,2), placed DATETIME(3));

INSERT INTO demo.customers (id, name, email, vip, signed_up) VALUES
  (1, 'Ann Lee', 'ann@example.com', TRUE, '2024-05-01 04:30:00.250'),
  (2, 'Bruno Díaz', 'bruno@example.com', FALSE, '2024-05-02 09:00:00'),
  (3, '陈静', NULL, FALSE, '2024-05-03 18:45:10.5');
INSERT INTO demo.products VALUES
  (10, 'Teapot', 24.50, 'new,eco', '{"color": "blue", "ml": 800}'),
  (11, 'Mug', 7.00, 'sale', '{"color": "white"}'),
  (12, 'Kettle 🚀', 59.90, NULL, NULL);
INSERT INTO demo.order_lines VALUES (1001, 1, 10, 1), (1001, 2, 11, 4), (2001, 1, 12, 1);
INSERT INTO shop_1.orders VALUES (1001, 1, 52.50, '2024-06-01 10:00:00.125');
INSERT INTO shop_2.orders VALUES (2001, 2, 59.90, '2024-06-02 11:30:00');
