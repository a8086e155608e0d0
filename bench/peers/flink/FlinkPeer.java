// FlinkPeer is the Flink CDC peer of make bench-peers (bench/README.md, "Peers"): it runs
// Flink SQL statements in a local environment (a MiniCluster in this JVM) until it is
// killed. ingestbench writes the statements (a mysql-cdc source table, an upsert-kafka
// sink table and INSERT INTO the sink SELECT * FROM the source) and the Flink
// configuration of one peer configuration:
//
//   java ... FlinkPeer flink.properties job.sql
//
// flink.properties holds Flink configuration keys (parallelism.default, ...); job.sql the
// statements, each ending with ";" at the end of a line. The MySQL password is not in
// either file: the statements name it as ${mysql.password}, replaced here with the value
// of the environment variable FLINK_PEER_MYSQL_PASSWORD (the statements are printed with
// the placeholder, never with the password). Compiled by scripts/bench-peers with javac.
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.TreeSet;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;

public final class FlinkPeer {
  static final String PASSWORD = "${mysql.password}";

  public static void main(String[] args) throws Exception {
    if (args.length != 2) {
      System.err.println("usage: FlinkPeer flink.properties job.sql");
      System.exit(2);
    }
    Properties props = new Properties();
    try (Reader r = Files.newBufferedReader(Path.of(args[0]), StandardCharsets.UTF_8)) {
      props.load(r);
    }
    Configuration conf = new Configuration();
    for (String k : new TreeSet<>(props.stringPropertyNames())) {
      conf.setString(k, props.getProperty(k));
      System.err.println("FlinkPeer: " + k + " = " + props.getProperty(k));
    }
    String password = System.getenv("FLINK_PEER_MYSQL_PASSWORD");
    if (password == null) {
      System.err.println("FlinkPeer: FLINK_PEER_MYSQL_PASSWORD is not set");
      System.exit(2);
    }
    String sql = new String(Files.readAllBytes(Path.of(args[1])), StandardCharsets.UTF_8);
    List<String> statements = new ArrayList<>();
    for (String stmt : sql.split(";\\s*\\n")) {
      if (!stmt.strip().isEmpty()) {
        statements.add(stmt.strip());
      }
    }
    EnvironmentSettings settings =
        EnvironmentSettings.newInstance().inStreamingMode().withConfiguration(conf).build();
    TableEnvironment env = TableEnvironment.create(settings);
    TableResult last = null;
    for (String stmt : statements) {
      System.err.println("FlinkPeer: " + stmt + ";");
      last = env.executeSql(stmt.replace(PASSWORD, password.replace("'", "''")));
    }
    if (last == null) {
      System.err.println("FlinkPeer: no statements in " + args[1]);
      System.exit(2);
    }
    last.getJobClient().ifPresent(j -> System.err.println("FlinkPeer: job " + j.getJobID() + " submitted"));
    // The job streams until the process is killed (the bench stops it after the last
    // record of its run has arrived).
    last.await();
    System.err.println("FlinkPeer: the job ended");
  }
}
