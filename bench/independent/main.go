// Command independent measures the recording proxy from outside, as a user
// would: a coder/websocket client against a plain sink and echo server run as
// a process of their own, and the same client and servers through `wireproof
// record`, also its own process; and 8 concurrent HTTP clients fetching a
// 20 KiB JSON response from that server process through `wireproof record`
// and through httputil.ReverseProxy, run as its own process too. Client,
// proxy and server are three processes, as they are where the recorder is
// used, so the direct figures cross one process hop and the proxied ones
// two. The same servers in the client's own process are measured too, as
// reference lines (a direct connection with no process hop at all). Of
// wireproof it links only the benchmarks' ends (bench/internal/ends: the
// servers and the traffic), none of the recording code: what it measures is
// the built binary.
//
// Each run is one round: it prints its figures in `go test -bench`'s format
// (BenchmarkIndependent...), so bench/run.sh runs it once per round after the
// ./bench benchmarks and bench/ratios judges them with the others, round by
// round. Usage:
//
//	go run ./bench/independent -wireproof PATH   # PATH: a built wireproof
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/coder/websocket"
	"github.com/wireproof/wireproof/bench/internal/ends"
)

func main() {
	bin := flag.String("wireproof", os.Getenv("WIREPROOF_BIN"), "the wireproof binary to run `wireproof record` from")
	rp := flag.String("serve-reverseproxy", "", "serve httputil.ReverseProxy to this upstream and print its URL (the program's own child)")
	relay := flag.String("serve-tcprelay", "", "relay every TCP connection to this upstream's host and print its URL (the program's own child)")
	serveEnds := flag.Bool("serve-ends", false, "serve the sink (/sink), the echo (/echo) and the JSON API (every other path) and print their URL (the program's own child)")
	messages := flag.Int("messages", 32<<10, "1 KiB messages sent one way, each way")
	trips := flag.Int("trips", 400, "echo round trips per block; 5 blocks take the ways in turn")
	requests := flag.Int("requests", 20000, "HTTP requests each way, in 5 blocks that take the ways in turn")
	flag.Parse()
	if *serveEnds {
		if err := serveUntilSignalled(endsHandler()); err != nil {
			fmt.Fprintln(os.Stderr, "independent:", err)
			os.Exit(1)
		}
		return
	}
	if *rp != "" {
		if err := serveReverseProxy(*rp); err != nil {
			fmt.Fprintln(os.Stderr, "independent:", err)
			os.Exit(1)
		}
		return
	}
	if *relay != "" {
		if err := serveTCPRelay(*relay); err != nil {
			fmt.Fprintln(os.Stderr, "independent:", err)
			os.Exit(1)
		}
		return
	}
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "independent: no wireproof binary: -wireproof PATH or $WIREPROOF_BIN")
		os.Exit(2)
	}
	dir, err := os.MkdirTemp("", "wireproof-independent-")
	if err == nil {
		defer os.RemoveAll(dir)
		err = run(os.Stdout, round{wireproof: *bin, dir: dir, messages: *messages, trips: *trips, requests: *requests})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "independent:", err)
		os.Exit(1)
	}
}

// round is what one run measures.
type round struct {
	wireproof string // the wireproof binary
	dir       string // where the bundles are written: sink.zst, echo.zst, http.zst
	messages  int    // 1 KiB messages one way, each way
	trips     int    // echo round trips per block, each way
	requests  int    // HTTP requests each way
	// reverseProxy runs httputil.ReverseProxy to upstream as a process that
	// prints its URL (nil: this program with -serve-reverseproxy).
	reverseProxy func(upstream string) (*exec.Cmd, error)
	// tcpRelay runs serveTCPRelay to upstream as a process that prints its
	// URL (nil: this program with -serve-tcprelay).
	tcpRelay func(upstream string) (*exec.Cmd, error)
	// ends serves endsHandler as a process that prints its URL (nil: this
	// program with -serve-ends).
	ends func() (*exec.Cmd, error)
}

// run measures one round and prints it to w.
func run(w io.Writer, r round) error {
	bin, dir, messages, trips, requests := r.wireproof, r.dir, r.messages, r.trips, r.requests
	if r.reverseProxy == nil {
		r.reverseProxy = func(upstream string) (*exec.Cmd, error) { return self("-serve-reverseproxy", upstream) }
	}
	if r.tcpRelay == nil {
		r.tcpRelay = func(upstream string) (*exec.Cmd, error) { return self("-serve-tcprelay", upstream) }
	}
	if r.ends == nil {
		r.ends = func() (*exec.Cmd, error) { return self("-serve-ends") }
	}
	endsCmd, err := r.ends()
	if err != nil {
		return err
	}
	server, err := startChild(endsCmd)
	if err != nil {
		return err
	}
	defer server.stop()
	upstream := server.url
	// The same ends in this process: the reference with no process hop.
	near := serve(endsHandler())
	defer near.Close()
	inProcess := "http://" + near.Addr().String()

	fmt.Fprintln(w, "goos: independent")
	wsProxy, err := startChild(exec.Command(bin, "record", "--upstream", upstream, "-o", filepath.Join(dir, "sink.zst")))
	if err != nil {
		return err
	}
	// Five blocks take the three ways in turn, the first rotating: the
	// VM's switch between a sink woken per message and one that reads many
	// at once, which moves the direct figure up to 3x between runs, then
	// lands on every way's blocks.
	bases := []string{upstream, wsProxy.url, inProcess}
	wsTook := make([]time.Duration, len(bases))
	var proxyCPU time.Duration
	for blk := 0; blk < blocks && err == nil; blk++ {
		for j := 0; j < len(bases) && err == nil; j++ {
			i := (blk + j) % len(bases)
			cpu0 := wsProxy.cpu()
			var d time.Duration
			d, err = oneWay(bases[i], messages/blocks)
			wsTook[i] += d
			if i == 1 {
				proxyCPU += wsProxy.cpu() - cpu0
			}
		}
	}
	wsMBps := func(d time.Duration) float64 {
		return float64(messages/blocks*blocks*ends.MessageSize) / d.Seconds() / 1e6
	}
	direct, recorded, near1 := wsMBps(wsTook[0]), wsMBps(wsTook[1]), wsMBps(wsTook[2])
	if serr := wsProxy.stop(); err == nil {
		err = serr
	}
	if err != nil {
		return fmt.Errorf("one way: %w", err)
	}
	fmt.Fprintf(w, "BenchmarkIndependentWSOneWay/direct 1 %.2f MB/s\n", direct)
	fmt.Fprintf(w, "BenchmarkIndependentWSOneWay/recorded 1 %.2f MB/s %.0f proxy-cpu-ns/msg\n", recorded, float64(proxyCPU)/float64(messages/blocks*blocks))
	fmt.Fprintf(w, "BenchmarkIndependentWSOneWay/inprocess 1 %.2f MB/s\n", near1)

	// The echo also crosses httputil.ReverseProxy run as its own process (it
	// relays the WebSocket upgrade) and a bare TCP relay process (the least
	// a proxy process can do), references for what any proxy process adds
	// to a round trip (a proxied trip wakes a third process twice), and
	// reaches the echo in this process, with no process hop at all.
	echoProxy, err := startChild(exec.Command(bin, "record", "--upstream", upstream, "-o", filepath.Join(dir, "echo.zst")))
	if err != nil {
		return err
	}
	echoRPCmd, err := r.reverseProxy(upstream)
	if err != nil {
		echoProxy.stop()
		return err
	}
	echoRP, err := startChild(echoRPCmd)
	if err != nil {
		echoProxy.stop()
		return err
	}
	echoRelayCmd, err := r.tcpRelay(upstream)
	if err != nil {
		echoProxy.stop()
		echoRP.stop()
		return err
	}
	echoRelay, err := startChild(echoRelayCmd)
	if err != nil {
		echoProxy.stop()
		echoRP.stop()
		return err
	}
	lat, err := echoTrips([]string{upstream, echoProxy.url, echoRP.url, echoRelay.url, inProcess}, trips)
	for _, c := range []*child{echoProxy, echoRP, echoRelay} {
		if serr := c.stop(); err == nil {
			err = serr
		}
	}
	if err != nil {
		return fmt.Errorf("echo: %w", err)
	}
	for i, name := range []string{"direct", "recorded", "reverseproxy", "tcprelay", "inprocess"} {
		l := lat[i]
		slices.Sort(l)
		fmt.Fprintf(w, "BenchmarkIndependentWSEcho/%s 1 %d p50-ns %d p99-ns\n", name, l[len(l)/2].Nanoseconds(), l[len(l)*99/100].Nanoseconds())
	}

	rpCmd, err := r.reverseProxy(upstream)
	if err != nil {
		return err
	}
	rpChild, err := startChild(rpCmd)
	if err != nil {
		return err
	}
	httpProxy, err := startChild(exec.Command(bin, "record", "--upstream", upstream, "-o", filepath.Join(dir, "http.zst")))
	if err != nil {
		rpChild.stop()
		return err
	}
	// Five blocks of requests/5 each way, the order rotating from block to
	// block, so no way always runs first (on a fresh process, or after
	// another's burst): each way's figure is its bytes over its time summed
	// over the blocks, and its CPU summed likewise. The third way is the
	// recorder fetching answers that all differ (ends.JSONDistinct), which
	// the bundle writer's memo of repeated payloads cannot spare: a
	// reference.
	ways := []struct {
		proxy *child
		path  string
	}{{rpChild, "/api/threads"}, {httpProxy, "/api/threads"}, {httpProxy, "/api/distinct"}}
	var bytes [3]int64
	var took, cpu [3]time.Duration
	for b := range blocks {
		for k := range ways {
			i := (k + b) % len(ways)
			cpu0 := ways[i].proxy.cpu()
			n, d, ferr := fetchJSON(ways[i].proxy.url+ways[i].path, requests/blocks)
			cpu[i] += ways[i].proxy.cpu() - cpu0
			bytes[i] += n
			took[i] += d
			if err == nil {
				err = ferr
			}
		}
	}
	mbps := func(i int) float64 { return float64(bytes[i]) / took[i].Seconds() / 1e6 }
	requests = requests / blocks * blocks
	for _, c := range []*child{httpProxy, rpChild} {
		if serr := c.stop(); err == nil {
			err = serr
		}
	}
	if err != nil {
		return fmt.Errorf("http: %w", err)
	}
	for i, name := range []string{"reverseproxy", "recorded", "recorded-distinct"} {
		fmt.Fprintf(w, "BenchmarkIndependentHTTPJSON/%s 1 %.2f MB/s %.0f proxy-cpu-ns/req\n", name, mbps(i), float64(cpu[i])/float64(requests))
	}
	return nil
}

// clockTick is the unit of /proc/PID/stat's CPU times (USER_HZ, 100 on
// Linux).
const clockTick = 10 * time.Millisecond

// endsHandler serves the sink at /sink, the echo at /echo and the JSON API
// at every other path.
func endsHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/sink", ends.Sink())
	mux.Handle("/echo", ends.Echo())
	mux.Handle("/api/distinct", ends.JSONDistinct(ends.JSONBody()))
	mux.Handle("/", ends.JSON(ends.JSONBody()))
	return mux
}

// serve serves h on a loopback port until closed.
func serve(h http.Handler) net.Listener {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "independent:", err)
		os.Exit(1)
	}
	go http.Serve(ln, h)
	return ln
}

func wsURL(u string) string { return "ws" + strings.TrimPrefix(u, "http") }

// oneWay sends n 1 KiB messages to the sink at base, one write each, and
// returns the time until the sink has counted the last.
func oneWay(base string, n int) (time.Duration, error) {
	ctx := context.Background()
	c, _, err := websocket.Dial(ctx, wsURL(base)+"/sink", nil)
	if err != nil {
		return 0, err
	}
	defer c.CloseNow()
	msgs := make([][]byte, 256)
	for i := range msgs {
		msgs[i] = ends.Message(i)
	}
	start := time.Now()
	for i := range n {
		if err := c.Write(ctx, websocket.MessageText, msgs[i%len(msgs)]); err != nil {
			return 0, err
		}
	}
	if err := c.Write(ctx, websocket.MessageText, []byte("done")); err != nil {
		return 0, err
	}
	_, got, err := c.Read(ctx)
	if err != nil {
		return 0, err
	}
	d := time.Since(start)
	if string(got) != strconv.Itoa(n) {
		return 0, fmt.Errorf("the sink counted %s messages, want %d", got, n)
	}
	c.Close(websocket.StatusNormalClosure, "")
	return d, nil
}

// echoTrips makes echo round trips of a 1 KiB message to each base in turn,
// trips at a time, five blocks each, on connections kept open, and returns
// each base's latencies.
func echoTrips(bases []string, trips int) ([][]time.Duration, error) {
	ctx := context.Background()
	conns := make([]*websocket.Conn, len(bases))
	for i, base := range bases {
		c, _, err := websocket.Dial(ctx, wsURL(base)+"/echo", nil)
		if err != nil {
			return nil, err
		}
		defer c.CloseNow()
		conns[i] = c
	}
	msg := ends.Message(1)
	lat := make([][]time.Duration, len(bases))
	for range 5 {
		for i, c := range conns {
			for range trips {
				start := time.Now()
				if err := c.Write(ctx, websocket.MessageText, msg); err != nil {
					return nil, err
				}
				if _, got, err := c.Read(ctx); err != nil || len(got) != len(msg) {
					return nil, fmt.Errorf("echo of %d bytes: %d bytes back, %v", len(msg), len(got), err)
				}
				lat[i] = append(lat[i], time.Since(start))
			}
		}
	}
	for _, c := range conns {
		c.Close(websocket.StatusNormalClosure, "")
	}
	return lat, nil
}

// blocks is the number of blocks the one-way messages and the HTTP
// requests are sent in, each way in turn (the echo's trips are in five
// blocks too).
const blocks = 5

// fetchJSON fetches the JSON response at target n times from 8 concurrent
// clients and returns the bytes of body and the time it took.
func fetchJSON(target string, n int) (int64, time.Duration, error) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	defer client.CloseIdleConnections()
	var left atomic.Int64
	left.Store(int64(n))
	var bytes atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	start := time.Now()
	for range 8 {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				res, err := client.Get(target)
				if err != nil {
					errs <- err
					return
				}
				m, err := io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if err != nil || res.StatusCode != http.StatusOK {
					errs <- fmt.Errorf("%s: %s, %d bytes, %v", target, res.Status, m, err)
					return
				}
				bytes.Add(m)
			}
		})
	}
	wg.Wait()
	d := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return 0, 0, err
	}
	return bytes.Load(), d, nil
}

// self is this program run with args: one of its children.
func self(args ...string) (*exec.Cmd, error) {
	bin, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return exec.Command(bin, args...), nil
}

// serveReverseProxy is the child that serves httputil.ReverseProxy in front
// of upstream, as the baseline of the HTTP figure, until it is signalled.
func serveReverseProxy(upstream string) error {
	u, err := url.Parse(upstream)
	if err != nil {
		return err
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.Transport = &http.Transport{MaxIdleConnsPerHost: 64}
	return serveUntilSignalled(rp)
}

// serveUntilSignalled serves h on a loopback port, having printed its URL,
// until it is signalled: a child of this program.
func serveUntilSignalled(h http.Handler) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Println("http://" + ln.Addr().String())
	srv := &http.Server{Handler: h}
	go func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
		<-sig
		srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// child is a proxy running as its own process, serving at url.
type child struct {
	cmd    *exec.Cmd
	url    string
	stderr *strings.Builder
}

// startChild starts cmd and reads the URL it prints first.
func startChild(cmd *exec.Cmd) (*child, error) {
	name := cmd.Path
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("%s printed no URL: %v\n%s", name, err, stderr.String())
	}
	return &child{cmd: cmd, url: strings.TrimSpace(line), stderr: &stderr}, nil
}

// cpu is the CPU time the child has used so far, whatever else the machine
// is doing: what the proxy costs per message or request. On Linux it is the
// sum over the child's threads of the time each has run, in nanoseconds
// (/proc/PID/task/TID/schedstat; a Go program's threads live as long as it
// does), or else the process's user and system time in clock ticks of 10 ms
// (/proc/PID/stat); zero elsewhere.
func (c *child) cpu() time.Duration {
	pid := c.cmd.Process.Pid
	if tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid)); err == nil {
		var sum time.Duration
		ok := len(tasks) > 0
		for _, t := range tasks {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, t.Name()))
			f := strings.Fields(string(b))
			if err != nil || len(f) == 0 {
				ok = false
				break
			}
			ns, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				ok = false
				break
			}
			sum += time.Duration(ns)
		}
		if ok {
			return sum
		}
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command name, which is in parentheses.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * clockTick
}

// stop ends the child with SIGTERM and waits for it.
func (c *child) stop() error {
	c.cmd.Process.Signal(syscall.SIGTERM)
	if err := c.cmd.Wait(); err != nil {
		return fmt.Errorf("%s: %v\n%s", c.cmd.Path, err, c.stderr.String())
	}
	return nil
}
