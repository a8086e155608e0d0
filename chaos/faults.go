package chaos

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// SetProduceQuota sets the broker's default client quota producer_byte_rate (every client id
// without a quota of its own) to bytesPerSecond, or removes it when bytesPerSecond is 0. The
// broker then delays its produce responses: a slow broker.
func SetProduceQuota(ctx context.Context, addr string, bytesPerSecond float64) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return fmt.Errorf("quota: %w", err)
	}
	defer cl.Close()
	op := kadm.AlterClientQuotaOp{Key: "producer_byte_rate", Value: bytesPerSecond, Remove: bytesPerSecond == 0}
	entry := kadm.AlterClientQuotaEntry{Entity: kadm.ClientQuotaEntity{{Type: "client-id"}}, Ops: []kadm.AlterClientQuotaOp{op}}
	res, err := kadm.NewClient(cl).AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{entry})
	if err != nil {
		return fmt.Errorf("quota: producer_byte_rate %v: %w", bytesPerSecond, err)
	}
	for _, r := range res {
		if r.Err != nil {
			return fmt.Errorf("quota: producer_byte_rate %v: %w (%s)", bytesPerSecond, r.Err, r.ErrMessage)
		}
	}
	return nil
}

// KillBinlogDumps kills, from the server side, every replication connection (Binlog Dump
// thread) of the server that db is connected to, and returns their ids.
func KillBinlogDumps(ctx context.Context, db *sql.DB) ([]int64, error) {
	rows, err := db.QueryContext(ctx, "SELECT ID FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'")
	if err != nil {
		return nil, fmt.Errorf("binlog dumps: %w", err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, fmt.Errorf("binlog dumps: %w", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("binlog dumps: %w", err)
	}
	for _, id := range ids {
		// A thread may have ended meanwhile (unknown thread id): not an error.
		_, _ = db.ExecContext(ctx, fmt.Sprintf("KILL %d", id))
	}
	return ids, nil
}

// MountTmpfs mounts a tmpfs of size bytes on dir (root only).
func MountTmpfs(dir string, size int64) error {
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0755", size)); err != nil {
		return fmt.Errorf("mount a tmpfs on %s: %w", dir, err)
	}
	return nil
}

// Unmount detaches the file system mounted on dir.
func Unmount(dir string) error {
	if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
		return fmt.Errorf("unmount %s: %w", dir, err)
	}
	return nil
}

// FillDisk writes the file dir/filler until the file system has no space left and returns its
// path; removing the file gives the space back.
func FillDisk(dir string) (string, error) {
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		return "", fmt.Errorf("fill %s: %w", dir, err)
	}
	defer f.Close()
	block := make([]byte, 4096)
	for {
		if _, err := f.Write(block); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return path, nil
			}
			return "", fmt.Errorf("fill %s: %w", dir, err)
		}
	}
}
