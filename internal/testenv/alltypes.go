package testenv

// AllTypesTable creates `alltypes`: a column of every type of the wire contract
// (docs/output.md), for the decoding golden tests and the same-bytes tests of the snapshot.
const AllTypesTable = `CREATE TABLE alltypes (
  id INT UNSIGNED NOT NULL PRIMARY KEY,
  c_bool TINYINT(1), c_tiny TINYINT, c_tiny_u TINYINT UNSIGNED, c_small SMALLINT, c_small_u SMALLINT UNSIGNED,
  c_med MEDIUMINT, c_med_u MEDIUMINT UNSIGNED, c_int INT, c_int_u INT UNSIGNED, c_big BIGINT, c_big_u BIGINT UNSIGNED,
  c_dec DECIMAL(20,6), c_dec0 DECIMAL(10,0), c_dec2 DECIMAL(5,2), c_float FLOAT, c_double DOUBLE,
  c_date DATE, c_dt DATETIME, c_dt6 DATETIME(6), c_ts TIMESTAMP NULL, c_ts3 TIMESTAMP(3) NULL,
  c_time TIME, c_time3 TIME(3), c_year YEAR,
  c_char CHAR(10), c_vc VARCHAR(100), c_latin VARCHAR(20) CHARACTER SET latin1,
  c_gbk VARCHAR(20) CHARACTER SET gbk, c_text TEXT, c_medtext MEDIUMTEXT,
  c_bin BINARY(4), c_varbin VARBINARY(10), c_blob BLOB,
  c_bit1 BIT(1), c_bit5 BIT(5), c_bit12 BIT(12),
  c_enum ENUM('small','medium','large'), c_set SET('a','b','c','d'),
  c_json JSON, c_geo GEOMETRY, c_point POINT
) DEFAULT CHARSET=utf8mb4`

// AllTypesRow1 inserts row 1 of alltypes with edge values in every column. Run it in a
// session with time_zone '+05:30' to check that TIMESTAMP is read as an instant.
const AllTypesRow1 = `INSERT INTO alltypes VALUES (1,
  1, -128, 255, -32768, 65535, -8388608, 16777215, -2147483648, 4294967295, -9223372036854775808, 18446744073709551615,
  -12345678901234.123456, 42, 4.5, 3.14159, 2.718281828459045,
  '2024-02-29', '2024-02-29 13:14:15', '2024-02-29 13:14:15.123456', '2024-01-02 03:04:05', '2024-01-02 03:04:05.678',
  '-838:59:59', '100:00:00.5', 2024,
  'abc', 'héllo 🚀 世界', 'café', '中文', 'some text', 'medium',
  x'DEADBE00', x'00FF', x'00FF10',
  b'1', b'10101', b'101010111100',
  'large', 'a,c,d', '{"k": [1, 2.5, "x"], "n": null, "s": "a  b \\" c"}',
  ST_GeomFromText('LINESTRING(0 0, 1e21 1e-7)'), ST_GeomFromText('POINT(1.5 -2)', 4326))`
