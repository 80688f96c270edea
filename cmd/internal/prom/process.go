package prom

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// userHZ is the unit of the times in /proc/PID/stat (USER_HZ, 100 on
// every Linux architecture Go runs on).
const userHZ = 100

// procRoot is where the process reads its own numbers (tests change it).
var procRoot = "/proc"

// ProcessCollector returns the collector of the process's own numbers from
// /proc: the process_* series of Prometheus's Go client. A number that
// cannot be read is left out, as that client does.
func ProcessCollector() Collector { return CollectorFunc(collectProcess) }

func collectProcess(add func(Family)) {
	one := func(name, help, typ string, v float64) {
		add(Family{Name: name, Help: help, Type: typ, Series: []Series{{Value: v}}})
	}
	self := procRoot + "/self/"
	if st, err := readStat(self + "stat"); err == nil {
		one("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", TypeCounter,
			float64(st.utime+st.stime)/userHZ)
		one("process_virtual_memory_bytes", "Virtual memory size in bytes.", TypeGauge, float64(st.vsize))
		one("process_resident_memory_bytes", "Resident memory size in bytes.", TypeGauge,
			float64(st.rss*uint64(os.Getpagesize())))
		if boot, err := bootTime(); err == nil {
			one("process_start_time_seconds", "Start time of the process since unix epoch in seconds.", TypeGauge,
				float64(boot)+float64(st.start)/userHZ)
		}
	}
	if n, err := openFDs(self + "fd"); err == nil {
		one("process_open_fds", "Number of open file descriptors.", TypeGauge, float64(n))
	}
	var files, as syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &files) == nil && syscall.Getrlimit(syscall.RLIMIT_AS, &as) == nil {
		one("process_max_fds", "Maximum number of open file descriptors.", TypeGauge, float64(files.Cur))
		one("process_virtual_memory_max_bytes", "Maximum amount of virtual memory available in bytes.", TypeGauge,
			float64(as.Cur))
	}
	if in, out, err := netOctets(self + "net/netstat"); err == nil {
		one("process_network_receive_bytes_total", "Number of bytes received by the process over the network.",
			TypeCounter, in)
		one("process_network_transmit_bytes_total", "Number of bytes sent by the process over the network.",
			TypeCounter, out)
	}
}

// stat is what the collector uses of /proc/PID/stat.
type stat struct {
	utime, stime, start, vsize, rss uint64
}

func readStat(path string) (stat, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return stat{}, err
	}
	// The command name, in parentheses, may hold spaces and parentheses:
	// the fields start after the last ')'.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return stat{}, errBadProc(path)
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 22 {
		return stat{}, errBadProc(path)
	}
	// f[0] is field 3 of proc(5): state.
	var st stat
	for _, x := range []struct {
		field int
		dst   *uint64
	}{{14, &st.utime}, {15, &st.stime}, {22, &st.start}, {23, &st.vsize}, {24, &st.rss}} {
		if *x.dst, err = strconv.ParseUint(f[x.field-3], 10, 64); err != nil {
			return stat{}, err
		}
	}
	return st, nil
}

// bootTime returns the btime line of /proc/stat.
func bootTime() (uint64, error) {
	data, err := os.ReadFile(procRoot + "/stat")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, errBadProc(procRoot + "/stat")
}

// openFDs counts the entries of /proc/PID/fd: its size where Linux gives
// it (6.2 and later; only the real /proc), else by listing it.
func openFDs(dir string) (int, error) {
	if fi, err := os.Stat(dir); err == nil && fi.Size() > 0 && procRoot == "/proc" {
		return int(fi.Size()), nil
	}
	f, err := os.Open(dir)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	return len(names), err
}

// netOctets returns IpExt's InOctets and OutOctets from
// /proc/PID/net/netstat: pairs of lines, names then values.
func netOctets(path string) (in, out float64, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, err
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	for i := 0; i+1 < len(lines); i += 2 {
		names, values := strings.Split(lines[i], " "), strings.Split(lines[i+1], " ")
		if len(names) != len(values) {
			return 0, 0, errBadProc(path)
		}
		if names[0] != "IpExt:" {
			continue
		}
		for j, n := range names {
			switch n {
			case "InOctets":
				in, err = strconv.ParseFloat(values[j], 64)
			case "OutOctets":
				out, err = strconv.ParseFloat(values[j], 64)
			}
			if err != nil {
				return 0, 0, err
			}
		}
	}
	return in, out, nil
}

// errBadProc says a file of /proc is not as proc(5) describes it.
type errBadProc string

func (e errBadProc) Error() string { return "unexpected contents of " + string(e) }
