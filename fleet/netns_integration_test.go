//go:build integration

package fleet_test

import (
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// netns is a worker's network namespace: a veth pair to the host, and socat forwarders that
// make MariaDB's and Kafka's loopback addresses (which Kafka also advertises) reachable from
// inside through the veth, so that `ip link set <host side> down` cuts the worker off both.
type netns struct {
	name, hostIf, nsIf string
	hostIP, nsIP       string
	forwarders         []*exec.Cmd
}

// netnsWorks reports whether a namespace can be made here (root, iproute2, socat).
func netnsWorks(t *testing.T, suffix string) bool {
	if _, err := exec.LookPath("socat"); err != nil {
		return false
	}
	name := "sv_probe_" + suffix
	if err := exec.Command("ip", "netns", "add", name).Run(); err != nil {
		return false
	}
	_ = exec.Command("ip", "netns", "del", name).Run()
	return true
}

func run(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// newNetns makes worker n's namespace and starts its forwarders; all is removed when the test
// ends.
func (ft *fleetTest) newNetns(n int) *netns {
	t := ft.t
	t.Helper()
	octet := ft.subnet + n
	ns := &netns{name: fmt.Sprintf("sv_%s_%d", ft.suffix, n), hostIf: fmt.Sprintf("svh%s%d", ft.suffix, n),
		nsIf: fmt.Sprintf("svn%s%d", ft.suffix, n), hostIP: fmt.Sprintf("10.239.%d.1", octet), nsIP: fmt.Sprintf("10.239.%d.2", octet)}
	t.Cleanup(func() {
		for _, f := range ns.forwarders {
			// The process group: socat's fork children serve the open connections.
			_ = syscall.Kill(-f.Process.Pid, syscall.SIGKILL)
			_ = f.Wait()
		}
		_ = exec.Command("ip", "link", "del", ns.hostIf).Run()
		_ = exec.Command("ip", "netns", "del", ns.name).Run()
	})
	run(t, "ip", "netns", "add", ns.name)
	run(t, "ip", "link", "add", ns.hostIf, "type", "veth", "peer", "name", ns.nsIf)
	run(t, "ip", "link", "set", ns.nsIf, "netns", ns.name)
	run(t, "ip", "addr", "add", ns.hostIP+"/30", "dev", ns.hostIf)
	run(t, "ip", "link", "set", ns.hostIf, "up")
	run(t, "ip", "netns", "exec", ns.name, "ip", "addr", "add", ns.nsIP+"/30", "dev", ns.nsIf)
	run(t, "ip", "netns", "exec", ns.name, "ip", "link", "set", ns.nsIf, "up")
	run(t, "ip", "netns", "exec", ns.name, "ip", "link", "set", "lo", "up")
	for _, addr := range []string{ft.svc.KafkaAddr, ft.svc.MySQLAddr} {
		host, port, _ := strings.Cut(addr, ":")
		// Host side: the veth address to the loopback service.
		ns.forward(t, nil, fmt.Sprintf("TCP-LISTEN:%s,bind=%s,fork,reuseaddr", port, ns.hostIP), "TCP:"+addr)
		// Inside: the service's loopback address to the host side of the veth.
		ns.forward(t, []string{"ip", "netns", "exec", ns.name}, fmt.Sprintf("TCP-LISTEN:%s,bind=%s,fork,reuseaddr", port, host),
			fmt.Sprintf("TCP:%s:%s", ns.hostIP, port))
	}
	time.Sleep(300 * time.Millisecond) // the forwarders listen
	return ns
}

func (ns *netns) forward(t *testing.T, prefix []string, from, to string) {
	t.Helper()
	args := append(append([]string{}, prefix...), "socat", from, to)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", strings.Join(args, " "), err)
	}
	ns.forwarders = append(ns.forwarders, cmd)
}

// link sets the host side of worker w's veth up or down.
func (ft *fleetTest) link(w *worker, state string) {
	ft.t.Helper()
	run(ft.t, "ip", "link", "set", w.ns.hostIf, state)
	ft.t.Logf("worker %d: link %s", w.n, state)
}
