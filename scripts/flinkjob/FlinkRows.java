// FlinkRows runs Flink SQL in a local mini-cluster for ingest's consumer test
// (cmd/ingest/flink_integration_test.go): it executes the statements of a file (the
// CREATE TABLE statements that `ingest plan --emit flink-sql` writes, with
// 'scan.bounded.mode' = 'latest-offset' added), then SELECT * FROM each table named on the
// command line, and prints every changelog row as one JSON line:
//   {"table":"t","kind":"+I","fields":["1",null,...]}
// Field values are printed as text: byte arrays as lower-case hex, BigDecimal with
// toPlainString, the others with toString. Compiled with javac at test time.
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;

public final class FlinkRows {
  public static void main(String[] args) throws Exception {
    String sql = new String(Files.readAllBytes(Path.of(args[0])), StandardCharsets.UTF_8);
    Configuration conf = new Configuration();
    conf.setString("parallelism.default", "1");
    conf.setString("table.local-time-zone", "UTC");
    EnvironmentSettings settings = EnvironmentSettings.newInstance().inStreamingMode().withConfiguration(conf).build();
    TableEnvironment env = TableEnvironment.create(settings);
    for (String stmt : sql.split(";\\s*\\n")) {
      if (stmt.strip().lines().allMatch(l -> l.strip().isEmpty() || l.strip().startsWith("--"))) {
        continue;
      }
      env.executeSql(stmt);
    }
    for (int a = 1; a < args.length; a++) {
      String table = args[a];
      TableResult result = env.executeSql("SELECT * FROM `" + table.replace("`", "``") + "`");
      try (CloseableIterator<Row> it = result.collect()) {
        while (it.hasNext()) {
          Row row = it.next();
          StringBuilder b = new StringBuilder("{\"table\":");
          quote(b, table);
          b.append(",\"kind\":");
          quote(b, row.getKind().shortString());
          b.append(",\"fields\":[");
          for (int i = 0; i < row.getArity(); i++) {
            if (i > 0) b.append(',');
            Object v = row.getField(i);
            if (v == null) b.append("null");
            else quote(b, text(v));
          }
          b.append("]}");
          System.out.println(b);
        }
      }
    }
    System.out.flush();
    System.exit(0);
  }

  static String text(Object v) {
    if (v instanceof byte[]) {
      StringBuilder h = new StringBuilder();
      for (byte x : (byte[]) v) h.append(String.format("%02x", x & 0xff));
      return h.toString();
    }
    if (v instanceof BigDecimal) return ((BigDecimal) v).toPlainString();
    return v.toString();
  }

  static void quote(StringBuilder b, String s) {
    b.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '"' || c == '\\') b.append('\\').append(c);
      else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
      else b.append(c);
    }
    b.append('"');
  }
}
