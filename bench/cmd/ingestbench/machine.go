package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// machine describes where the suite ran.
type machine struct {
	Host       string  `json:"host"`
	CPUs       int     `json:"nproc"`
	CPUModel   string  `json:"cpu_model"`
	MemoryGiB  float64 `json:"memory_gib"`
	Kernel     string  `json:"kernel"`
	LoadAvg    string  `json:"load_average_at_start"`
	LoadAvgEnd string  `json:"load_average_at_end"`
	GoVersion  string  `json:"go_version"`
	MariaDB    string  `json:"mariadb_version"`
	Kafka      string  `json:"kafka_version"`
	Ingest     string  `json:"ingest_version"`
	GitCommit  string  `json:"git_commit"`
	Compressed string  `json:"compression"`
	Partitions int     `json:"partitions"`
}

// describeMachine fills what the machine itself tells; the server versions are set by the
// caller.
func describeMachine(ctx context.Context, c config) machine {
	host, _ := os.Hostname()
	m := machine{
		Host: host, CPUs: runtime.NumCPU(), CPUModel: cpuModel(), MemoryGiB: memoryGiB(),
		Kernel: firstLine("/proc/sys/kernel/osrelease"), LoadAvg: loadAverage(),
		GoVersion: runtime.Version(), Compressed: c.Compression, Partitions: c.Partitions,
	}
	m.Ingest = strings.TrimPrefix(command(ctx, c.Ingest, "version"), "ingest ")
	m.GitCommit = command(ctx, "git", "describe", "--always", "--dirty", "--tags")
	return m
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

func memoryGiB() float64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, _ := strconv.ParseFloat(fields[1], 64)
			return round(kb/(1<<20), 1)
		}
	}
	return 0
}

// loadAverage returns the 1, 5 and 15 minute load averages: the machine is shared, and a
// busy one makes every figure lower.
func loadAverage() string {
	f := strings.Fields(firstLine("/proc/loadavg"))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

func firstLine(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimSpace(line)
}

// command returns the first line of a command's output, or "unknown".
func command(ctx context.Context, name string, args ...string) string {
	out, err := exec.CommandContext(ctx, name, args...).Output()
	if err != nil {
		return "unknown"
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return line
}

// machineBusy returns the CPU time all processes of the machine have used: every CPU's
// user, nice, system and steal time from /proc/stat. Interrupt time is left out: it is
// mostly the loopback traffic of the measurement itself.
func machineBusy() time.Duration {
	f := strings.Fields(firstLine("/proc/stat"))
	if len(f) < 9 || f[0] != "cpu" {
		return 0
	}
	var busy int64
	for i, v := range f[1:9] {
		n, _ := strconv.ParseInt(v, 10, 64)
		if i != 3 && i != 4 && i != 5 && i != 6 { // idle, iowait, irq, softirq
			busy += n
		}
	}
	return time.Duration(busy) * time.Second / 100 // USER_HZ
}
