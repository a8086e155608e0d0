package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"time"

	myclient "github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"
)

// Binlog event framing (the common header of every event).
const (
	eventHeaderLen  = 19
	rotateEventType = 4 // its body: the position (8 bytes), then the next file's name
)

// rawRead is the physical limit of the binlog path: it reads the binlog from from to to off
// a replication connection (COM_REGISTER_SLAVE, COM_BINLOG_DUMP, as go-mysql and ingest do)
// and only frames the events: it reads each packet, checks its status byte and the event's
// length, and follows the position in the header; nothing is decoded. rows is the number of
// changes the range holds (the caller knows it, and the decode counts it for information).
func rawRead(ctx context.Context, s services, flavor string, from, to binlogPos, rows int) (rawResult, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cpu0, start := selfCPU(), time.Now()
	conn, err := myclient.ConnectWithContext(ctx, s.MySQLAddr(), s.CDCUser, s.CDCPass, "", 10*time.Second)
	if err != nil {
		return rawResult{}, fmt.Errorf("raw binlog read: connect: %w", err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	// The server sends no checksum when told so (none to skip), and MariaDB its own events.
	setup := []string{"SET @master_binlog_checksum='NONE', @source_binlog_checksum='NONE'"}
	if flavor == gomysql.MariaDBFlavor {
		setup = append(setup, "SET @mariadb_slave_capability=4")
	}
	for _, q := range setup {
		if _, err := conn.Execute(q); err != nil {
			return rawResult{}, fmt.Errorf("raw binlog read: %s: %w", q, err)
		}
	}
	serverID := 70000 + rand.Uint32N(1<<20)
	if err := writeRegister(conn, serverID); err != nil {
		return rawResult{}, err
	}
	if err := writeDump(conn, serverID, from); err != nil {
		return rawResult{}, err
	}
	r := rawResult{Rows: rows}
	file := from.File
	var buf []byte
	for {
		buf, err = conn.ReadPacketReuseMem(buf[:0])
		if err != nil {
			return r, fmt.Errorf("raw binlog read from %s to %s: %w", from, to, err)
		}
		switch {
		case len(buf) == 0:
			return r, fmt.Errorf("raw binlog read from %s to %s: an empty packet", from, to)
		case buf[0] == gomysql.ERR_HEADER:
			return r, fmt.Errorf("raw binlog read from %s to %s: %w", from, to, conn.HandleErrorPacket(buf))
		case buf[0] == gomysql.EOF_HEADER && len(buf) < 9:
			return r, fmt.Errorf("raw binlog read from %s to %s: the server ended the dump early", from, to)
		}
		ev := buf[1:]
		if len(ev) < eventHeaderLen || int(binary.LittleEndian.Uint32(ev[9:])) != len(ev) {
			return r, fmt.Errorf("raw binlog read from %s to %s: an event of %d bytes with a header that says otherwise", from, to, len(ev))
		}
		r.Bytes += int64(len(ev))
		logPos := binary.LittleEndian.Uint32(ev[13:])
		if ev[4] == rotateEventType {
			if len(ev) > eventHeaderLen+8 {
				file = string(ev[eventHeaderLen+8:]) // its LogPos is in the file it ends
			}
			continue
		}
		if logPos > 0 && (binlogPos{File: file, Pos: logPos}).after(to) {
			break
		}
	}
	r.Wall, r.CPU = time.Since(start), selfCPU()-cpu0
	return r, nil
}

// writeRegister sends COM_REGISTER_SLAVE with serverID and no host, user or port.
func writeRegister(conn *myclient.Conn, serverID uint32) error {
	conn.ResetSequence()
	data := make([]byte, 4+1+4+1+1+1+2+4+4)
	data[4] = gomysql.COM_REGISTER_SLAVE
	binary.LittleEndian.PutUint32(data[5:], serverID)
	if err := conn.WritePacket(data); err != nil {
		return fmt.Errorf("raw binlog read: register: %w", err)
	}
	if _, err := conn.ReadOKPacket(); err != nil {
		return fmt.Errorf("raw binlog read: register: %w", err)
	}
	return nil
}

// writeDump sends COM_BINLOG_DUMP from position from.
func writeDump(conn *myclient.Conn, serverID uint32, from binlogPos) error {
	conn.ResetSequence()
	data := make([]byte, 4+1+4+2+4+len(from.File))
	data[4] = gomysql.COM_BINLOG_DUMP
	binary.LittleEndian.PutUint32(data[5:], from.Pos)
	binary.LittleEndian.PutUint32(data[11:], serverID)
	copy(data[15:], from.File)
	if err := conn.WritePacket(data); err != nil {
		return fmt.Errorf("raw binlog read: dump from %s: %w", from, err)
	}
	return nil
}
