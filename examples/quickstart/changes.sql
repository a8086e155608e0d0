-- Changes `make demo` applies between its two runs: upserts, a delete (a tombstone), and a
-- primary-key change (a tombstone for the old key, then the row under the new key).
UPDATE demo.customers SET vip = TRUE, email = 'bruno@example.org' WHERE id = 2;
UPDATE demo.products SET price = 22.00, tags = 'sale,eco' WHERE id = 10;
DELETE FROM demo.products WHERE id = 11;
DELETE FROM demo.order_lines WHERE order_id = 1001 AND line_no = 2;
UPDATE demo.order_lines SET line_no = 5 WHERE order_id = 2001 AND line_no = 1;
INSERT INTO shop_2.orders VALUES (2002, 3, 7.00, '2024-06-03 08:15:00');
