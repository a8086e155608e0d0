//go:build integration

package upsert

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ingestkit/ingest/internal/testenv"
)

// murmur2Java reads hex-encoded keys, one a line, and prints for each the partitions the
// Java client's default partitioner computes for the partition counts given as arguments.
const murmur2Java = `
import org.apache.kafka.common.utils.Utils;
import java.io.*;
import java.util.HexFormat;

public class Murmur2 {
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        StringBuilder out = new StringBuilder();
        for (String line; (line = in.readLine()) != null; ) {
            byte[] key = HexFormat.of().parseHex(line.trim());
            out.append(Utils.murmur2(key));
            for (String n : args) {
                out.append(' ').append(Utils.toPositive(Utils.murmur2(key)) % Integer.parseInt(n));
            }
            out.append('\n');
        }
        System.out.print(out);
    }
}
`

// TestPartitionMatchesJava compiles and runs a Java program against the Kafka client jar
// and checks that our partition of each key equals the Java client's.
func TestPartitionMatchesJava(t *testing.T) {
	libs := testenv.KafkaLibs()
	if libs == "" {
		t.Fatal("INGEST_TEST_KAFKA_LIBS is not set: run `eval $(scripts/services env)` (the Kafka jars are needed to compare with the Java client)")
	}
	jars, _ := filepath.Glob(filepath.Join(libs, "kafka-clients-*.jar"))
	if len(jars) == 0 {
		t.Fatalf("no kafka-clients-*.jar in %s", libs)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "Murmur2.java")
	if err := os.WriteFile(src, []byte(murmur2Java), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("javac", "-cp", jars[0], "-d", dir, src).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	keys := partitionKeys()
	var in bytes.Buffer
	for _, k := range keys {
		fmt.Fprintln(&in, hex.EncodeToString(k))
	}
	counts := []int{1, 3, 7, 12, 64}
	// Utils needs the client's own dependencies (slf4j…): the whole directory goes on the path.
	args := []string{"-cp", filepath.Join(libs, "*") + string(os.PathListSeparator) + dir, "Murmur2"}
	for _, n := range counts {
		args = append(args, strconv.Itoa(n))
	}
	cmd := exec.Command("java", args...)
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("java: %v\n%s", err, stderr.Bytes())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(keys) {
		t.Fatalf("java printed %d lines for %d keys", len(lines), len(keys))
	}
	for i, k := range keys {
		want := lines[i]
		got := strconv.Itoa(int(Murmur2(k)))
		for _, n := range counts {
			got += " " + strconv.Itoa(PartitionFor(k, n))
		}
		if got != want {
			t.Errorf("key %q: ours %q, java %q", k, got, want)
		}
	}
}

func partitionKeys() [][]byte {
	keys := [][]byte{
		{}, []byte("a"), []byte("ab"), []byte("abc"), []byte("abcd"),
		[]byte(`{"id":42}`), []byte(`{"order_id":7,"line_no":2}`),
		[]byte(`{"name":"héllo 🚀"}`), []byte(`{"k":"日本語のキー"}`),
		[]byte(`{"id":18446744073709551615}`), []byte(`{"s":"\u0000\n\""}`),
		[]byte(strings.Repeat(`{"long":"0123456789abcdef"}`, 200)),
		{0xff, 0xfe, 0x80, 0x7f, 0x00},
	}
	for i := range 200 {
		keys = append(keys, []byte(fmt.Sprintf(`{"id":%d}`, i*7919-500)))
	}
	return keys
}
