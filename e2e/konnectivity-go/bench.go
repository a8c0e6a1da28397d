package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand"
	"os"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
)

// The bench backend's commands (bench/.../BenchBackend.java): the first byte a connection sends.
const (
	backendEcho   = 'E'
	backendSource = 'S'
)

// runBench is the grpc-go client of bench/tunnel-bench.sh's grpcgo route: only what a client of the
// gRPC frontend must do, as kube-apiserver's konnectivity client does it (one ClientConn, one Proxy
// stream per dial, a new Packet per Recv), and nothing the client subcommand adds for the interop
// tests (stdin pumping, SHA-256). Downloads go to the bench backend's SOURCE command; dials are
// DIAL_REQ + a 1-byte echo, timed like the Java harness's dials, then closed with CLOSE_REQ.
//
// It runs -bytes (over -streams parallel streams), then -dials, printing one result line each; with
// -serve it then reads the same work as commands from stdin ("stream BYTES STREAMS", "dials N"), one
// result line per command, until EOF: the harness keeps one process (and connection) per run.
func runBench(args []string) int {
	fs := flag.NewFlagSet("bench", flag.ExitOnError)
	proxy := fs.String("proxy", "127.0.0.1:8090", "the server's gRPC frontend address")
	address := fs.String("address", "", "host:port of the bench backend, which the agent dials")
	total := fs.Int64("bytes", 0, "download this many bytes from the backend (0: none)")
	streams := fs.Int("streams", 1, "split -bytes over this many parallel Proxy streams")
	dials := fs.Int("dials", 0, "then this many sequential dials (DIAL_REQ, 1-byte echo, CLOSE_REQ)")
	serve := fs.Bool("serve", false, "then run commands from stdin until EOF: 'stream BYTES STREAMS', 'dials N'")
	window := fs.Int("window", 0, "HTTP/2 stream and connection window in bytes (0: grpc-go's default, 64 KiB with BDP estimation)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file (go tool pprof)")
	heapMiB := fs.Int("heap-mib", 0, "keep this many MiB live (never touched), so the GC paces like a process with that heap, e.g. kube-apiserver")
	fs.Parse(args)
	if *address == "" || *total < 0 || *streams < 1 || *dials < 0 || *window < 0 || *heapMiB < 0 {
		logf("bench: -address is required; -bytes, -dials, -window, -heap-mib >= 0; -streams >= 1")
		return 64
	}
	// The GC's next target is twice the live heap (GOGC=100): with an otherwise empty heap it runs every
	// ~4 MiB received; in kube-apiserver, with hundreds of MiB live, far more rarely. The ballast's pages
	// are never written, so it costs address space, not memory.
	ballast := make([]byte, *heapMiB<<20)
	defer runtime.KeepAlive(ballast)
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			logf("bench: %v", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			logf("bench: %v", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}

	opts := []grpc.DialOption{grpc.WithInsecure(), grpc.WithBlock(), grpc.WithUserAgent("konnectivity-go-bench")}
	if *window > 0 {
		// A fixed window turns grpc-go's BDP estimation off, as it does in grpc-java.
		opts = append(opts, grpc.WithInitialWindowSize(int32(*window)), grpc.WithInitialConnWindowSize(int32(*window)))
	}
	dctx, dcancel := context.WithTimeout(context.Background(), 10*time.Second)
	cc, err := grpc.DialContext(dctx, *proxy, opts...)
	dcancel()
	if err != nil {
		logf("bench: dial %s: %v", *proxy, err)
		return 1
	}
	defer cc.Close()
	b := &bencher{client: NewProxyServiceClient(cc), address: *address}
	event("ready proxy=%s", *proxy)

	ok := true
	if *total > 0 {
		ok = b.report(b.streamCommand(*total, *streams)) && ok
	}
	if *dials > 0 {
		ok = b.report(b.dialsCommand(*dials, false)) && ok
	}
	if *serve {
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() {
			ok = b.report(b.command(strings.Fields(in.Text()))) && ok
		}
	}
	if !ok {
		return 3
	}
	return 0
}

// bencher runs the bench's work on one ClientConn. Commands run one at a time.
type bencher struct {
	client  ProxyServiceClient
	address string
}

// report prints a command's result line, or an error line; it returns whether the command succeeded.
func (b *bencher) report(line string, err error) bool {
	if err != nil {
		event("error error=%q", err.Error())
		return false
	}
	event("%s", line)
	return true
}

func (b *bencher) command(f []string) (string, error) {
	switch {
	case len(f) == 3 && f[0] == "stream":
		total, err1 := strconv.ParseInt(f[1], 10, 64)
		streams, err2 := strconv.Atoi(f[2])
		if err1 != nil || err2 != nil || total < 0 || streams < 1 {
			return "", fmt.Errorf("stream %s %s: expected BYTES >= 0 and STREAMS >= 1", f[1], f[2])
		}
		return b.streamCommand(total, streams)
	case len(f) == 2 && f[0] == "dials":
		n, err := strconv.Atoi(f[1])
		if err != nil || n < 1 {
			return "", fmt.Errorf("dials %s: expected N >= 1", f[1])
		}
		return b.dialsCommand(n, true)
	default:
		return "", fmt.Errorf("unknown command %q (expected: stream BYTES STREAMS | dials N)", strings.Join(f, " "))
	}
}

// streamCommand downloads total bytes split over streams parallel Proxy streams and reports the wall
// time from the first DIAL_REQ to the last stream's end, and this process's CPU time over it.
func (b *bencher) streamCommand(total int64, streams int) (string, error) {
	each := total / int64(streams)
	cpu0 := cpuSeconds()
	start := time.Now()
	errs := make(chan error, streams)
	var wg sync.WaitGroup
	for i := 0; i < streams; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- b.download(each)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return "", err
		}
	}
	secs := time.Since(start).Seconds()
	moved := each * int64(streams)
	return fmt.Sprintf("stream bytes=%d streams=%d seconds=%.6f cpu=%.3f gbps=%.3f",
		moved, streams, secs, cpuSeconds()-cpu0, float64(moved)*8/secs/1e9), nil
}

// dialsCommand runs n sequential dials and reports their latency percentiles (and, for the harness,
// every latency in nanoseconds).
func (b *bencher) dialsCommand(n int, all bool) (string, error) {
	cpu0 := cpuSeconds()
	lat := make([]int64, n)
	for i := range lat {
		d, err := b.dialEcho()
		if err != nil {
			return "", fmt.Errorf("dial %d of %d: %v", i+1, n, err)
		}
		lat[i] = d.Nanoseconds()
	}
	cpu := cpuSeconds() - cpu0
	sorted := append([]int64(nil), lat...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	line := fmt.Sprintf("dials n=%d p50_ms=%.3f p99_ms=%.3f max_ms=%.3f cpu=%.3f",
		n, ms(percentile(sorted, 50)), ms(percentile(sorted, 99)), ms(sorted[n-1]), cpu)
	if all {
		parts := make([]string, n)
		for i, v := range lat {
			parts[i] = strconv.FormatInt(v, 10)
		}
		line += " ns=" + strings.Join(parts, ",")
	}
	return line, nil
}

// proxyConn is one dialed Proxy stream.
type proxyConn struct {
	stream ProxyService_ProxyClient
	id     int64
	cancel context.CancelFunc
}

// open starts a Proxy stream and dials the backend through it.
func (b *bencher) open(timeout time.Duration) (*proxyConn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	stream, err := b.client.Proxy(ctx)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("Proxy: %v", err)
	}
	random := rand.Int63()
	if err := stream.Send(dialReq(b.address, random)); err != nil {
		cancel()
		return nil, fmt.Errorf("DIAL_REQ: %v", errText(err))
	}
	pkt, err := stream.Recv()
	if err != nil {
		cancel()
		return nil, fmt.Errorf("waiting for DIAL_RSP: %v", errText(err))
	}
	rsp := pkt.GetDialResponse()
	if pkt.Type != PacketType_DIAL_RSP || rsp == nil || rsp.Random != random || rsp.Error != "" {
		cancel()
		return nil, fmt.Errorf("dial %s failed: first packet %v", b.address, pkt)
	}
	return &proxyConn{stream: stream, id: rsp.ConnectID, cancel: cancel}, nil
}

// download streams n bytes from the backend's SOURCE command; the backend closes after the last
// byte, so the server sends CLOSE_RSP unsolicited and then ends the stream.
func (b *bencher) download(n int64) error {
	c, err := b.open(30 * time.Minute)
	if err != nil {
		return err
	}
	defer c.cancel()
	req := make([]byte, 9)
	req[0] = backendSource
	binary.BigEndian.PutUint64(req[1:], uint64(n))
	if err := c.stream.Send(dataPkt(c.id, req)); err != nil {
		return fmt.Errorf("sending SOURCE: %v", errText(err))
	}
	var got int64
	for {
		pkt, err := c.stream.Recv()
		if err != nil {
			return fmt.Errorf("after %d of %d bytes: %v", got, n, errText(err))
		}
		switch pkt.Type {
		case PacketType_DATA:
			if d := pkt.GetData(); d.ConnectID == c.id {
				got += int64(len(d.Data))
			} else {
				return fmt.Errorf("DATA for connectID %d on connection %d", d.ConnectID, c.id)
			}
		case PacketType_CLOSE_RSP:
			if e := pkt.GetCloseResponse().Error; e != "" || got != n {
				return fmt.Errorf("CLOSE_RSP after %d of %d bytes, error %q", got, n, e)
			}
			return c.finish()
		default:
			return fmt.Errorf("unexpected packet type %d", int32(pkt.Type))
		}
	}
}

// dialEcho times one dial: from the Proxy call to the echo of one byte (as the Java harness's
// dials are timed); then it closes the connection with CLOSE_REQ, untimed.
func (b *bencher) dialEcho() (time.Duration, error) {
	start := time.Now()
	c, err := b.open(30 * time.Second)
	if err != nil {
		return 0, err
	}
	defer c.cancel()
	if err := c.stream.Send(dataPkt(c.id, []byte{backendEcho, 42})); err != nil {
		return 0, fmt.Errorf("sending ECHO: %v", errText(err))
	}
	pkt, err := c.stream.Recv()
	if err != nil {
		return 0, fmt.Errorf("waiting for the echo: %v", errText(err))
	}
	if d := pkt.GetData(); pkt.Type != PacketType_DATA || d == nil || len(d.Data) != 1 || d.Data[0] != 42 {
		return 0, fmt.Errorf("echo: got %v", pkt)
	}
	elapsed := time.Since(start)
	if err := c.stream.Send(closeReq(c.id)); err != nil {
		return 0, fmt.Errorf("CLOSE_REQ: %v", errText(err))
	}
	for {
		pkt, err := c.stream.Recv()
		if err != nil {
			return 0, fmt.Errorf("waiting for CLOSE_RSP: %v", errText(err))
		}
		if pkt.Type == PacketType_CLOSE_RSP {
			return elapsed, c.finish()
		}
	}
}

// finish half-closes the stream and waits for the server to end it.
func (c *proxyConn) finish() error {
	c.stream.CloseSend()
	for {
		if _, err := c.stream.Recv(); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("waiting for the stream's end: %v", err)
		}
	}
}

// cpuSeconds is this process's user + system CPU time so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

func percentile(sorted []int64, p float64) int64 {
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1 // as the harness's Workloads.percentile
	if i < 0 {
		i = 0
	}
	if i >= len(sorted) {
		i = len(sorted) - 1
	}
	return sorted[i]
}

func ms(ns int64) float64 { return float64(ns) / 1e6 }
