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

// MariaDBTypesTables creates the tables of the MariaDB-only and fixture-found types (the
// same-bytes test of docs/output.md's rows for them): UUID, INET4 and INET6 as primary keys
// and as columns, DECIMAL ZEROFILL, single-byte character sets that golang.org/x/text lacks
// (macce, keybcs2, swe7) and a GEOMETRYCOLLECTION; and ucakey, the shape MariaDB 11 brings
// by default: a text key in utf8mb4_uca1400_ai_ci (UCA 14.0, where "ß" = "ss") next to UUID,
// INET4 and INET6 columns.
var MariaDBTypesTables = []string{
	`CREATE TABLE mdbtypes (
  id UUID NOT NULL PRIMARY KEY,
  u UUID, i4 INET4, i6 INET6,
  d DECIMAL(8,4) ZEROFILL, d0 DECIMAL(8,0) ZEROFILL, n INT(6) ZEROFILL,
  mc VARCHAR(20) CHARACTER SET macce, kb VARCHAR(20) CHARACTER SET keybcs2, sw CHAR(5) CHARACTER SET swe7,
  g GEOMETRYCOLLECTION
) DEFAULT CHARSET=utf8mb4`,
	`CREATE TABLE inet4key (k4 INET4 NOT NULL PRIMARY KEY, v INT)`,
	`CREATE TABLE inet6key (k6 INET6 NOT NULL PRIMARY KEY, v INT)`,
	`CREATE TABLE ucakey (k VARCHAR(30) COLLATE utf8mb4_uca1400_ai_ci NOT NULL PRIMARY KEY,
  u UUID, i4 INET4, i6 INET6) DEFAULT CHARSET=utf8mb4`,
}

// MariaDBTypesRows fills the MariaDBTypesTables with edge values: time-based (version 1)
// UUIDs, which the server stores with their groups swapped, IPv4-mapped and -compatible
// INET6, a single zero group, zero-padded decimals, and characters of each character set.
var MariaDBTypesRows = []string{
	`INSERT INTO mdbtypes VALUES
  ('123e4567-e89b-12d3-a456-426655440000', '6ccd780c-baba-4026-9564-5b8c656024db', '192.168.0.1', '2001:db8::1',
   123.4569, 5, 42, 'Žluťoučký kůň', 'Žluťoučký kůň', 'Åäö', ST_GeomFromText('GEOMETRYCOLLECTION(POINT(1 2), LINESTRING(0 0, 1.5 1e-7), POLYGON((0 0, 1 0, 1 1, 0 0)))', 4326)),
  ('00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff', '0.0.0.0', '::ffff:1.2.3.4',
   0, 0, 0, '', '', '', ST_GeomFromText('GEOMETRYCOLLECTION EMPTY')),
  ('ffffffff-ffff-ffff-ffff-ffffffffffff', NULL, '255.255.255.255', '::1.2.3.4', 9999.9999, 99999999, 999999, 'Äő', 'č', 'ÉÄÅ', NULL),
  ('6ccd780c-baba-1026-9564-5b8c656024db', NULL, NULL, '1:0:2:3:4:5:6:7', NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  ('6ccd780c-baba-1026-9564-5b8c656024dc', NULL, NULL, '::', NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  ('0ccd780c-baba-1026-9564-5b8c656024dd', NULL, NULL, 'fe80::1:0:0:1', NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  ('6ccd780c-baba-6026-9564-5b8c656024db', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  ('6ccd780c-baba-7026-0564-5b8c656024db', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  ('6ccd780c-baba-f026-c564-5b8c656024db', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  ('6ccd780c-baba-0026-9564-5b8c656024db', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  ('1ccd780c-baba-4026-a564-0b8c656024db', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  ('fccd780c-baba-5026-b564-0b8c656024db', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`,
	`INSERT INTO inet4key VALUES ('0.0.0.0', 1), ('0.0.0.1', 2), ('9.255.255.255', 3), ('10.0.0.0', 4), ('10.0.0.1', 5),
  ('127.0.0.1', 6), ('192.168.0.1', 7), ('192.168.1.0', 8), ('255.255.255.254', 9), ('255.255.255.255', 10)`,
	`INSERT INTO inet6key VALUES ('::', 1), ('::1', 2), ('::1.2.3.4', 3), ('::ffff:1.2.3.4', 4), ('::ffff:1.2.3.5', 5),
  ('1::', 6), ('1::2:3:4:5:6:7', 7), ('2001:db8::1', 8), ('2001:db8:0:1::1', 9), ('fe80::1', 10),
  ('ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 11)`,
	`INSERT INTO ucakey VALUES ('ß1', '123e4567-e89b-12d3-a456-426655440000', '10.0.0.1', '::ffff:10.0.0.1'),
  ('ss2', '6ccd780c-baba-4026-9564-5b8c656024db', '0.0.0.0', '::'), ('SS3', NULL, NULL, NULL),
  ('a', 'ffffffff-ffff-ffff-ffff-ffffffffffff', '255.255.255.255', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'),
  ('Ä b', '00000000-0000-0000-0000-000000000000', '127.0.0.1', '::1'), ('ab', NULL, NULL, '2001:db8::1'),
  ('Ångström', '6ccd780c-baba-1026-9564-5b8c656024db', NULL, 'fe80::1:0:0:1'), ('Zürich', NULL, '192.168.0.1', NULL),
  ('zebra', NULL, NULL, NULL), ('é', NULL, NULL, NULL), ('F', NULL, NULL, NULL), ('日本', NULL, NULL, NULL),
  ('🚀', NULL, NULL, NULL), ('', NULL, NULL, NULL), ('Ǆ', NULL, NULL, NULL)`,
}
