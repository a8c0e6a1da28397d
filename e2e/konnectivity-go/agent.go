package main

import (
	"bufio"
	"context"
	"flag"
	"net"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
)

// agent serves dials for one AgentService.Connect stream, as upstream's proxy-agent does: one
// socket per connectID, 4 KiB reads toward the server, an unsolicited CLOSE_RSP on remote EOF.
type agent struct {
	out         *packetSender
	dialTimeout time.Duration
	queue       int

	mu      sync.Mutex
	nextID  int64
	conns   map[int64]*endpoint
	pending map[int64]context.CancelFunc
}

// endpoint is one dialed backend socket; writes go through a bounded queue drained by one goroutine.
type endpoint struct {
	id     int64
	conn   net.Conn
	writes chan []byte
	done   chan struct{}
	once   sync.Once
}

func (e *endpoint) close() {
	e.once.Do(func() {
		close(e.done)
		e.conn.Close()
	})
}

func runAgent(args []string) int {
	fs := flag.NewFlagSet("agent", flag.ExitOnError)
	server := fs.String("server", "127.0.0.1:8091", "the server's agent address")
	agentID := fs.String("agent-id", "go-agent", "sent as the agentid header")
	identifiers := fs.String("agent-identifiers", "", "sent as the agentidentifiers header (URL-query form)")
	dialTimeout := fs.Duration("dial-timeout", 5*time.Second, "backend dial timeout")
	queue := fs.Int("xfr-channel-size", 150, "DATA packets queued per backend socket")
	headerTimeout := fs.Duration("header-timeout", 5*time.Second, "how long to wait for the response headers")
	caCert := fs.String("ca-cert", "", "CA of the server certificate; turns TLS on")
	agentCert := fs.String("agent-cert", "", "client certificate (mTLS)")
	agentKey := fs.String("agent-key", "", "client key (mTLS)")
	serverName := fs.String("server-name", "", "name the server certificate must carry (default: the -server host)")
	fs.Parse(args)

	transport := grpc.WithInsecure()
	if *caCert != "" {
		name := *serverName
		if name == "" {
			name, _, _ = net.SplitHostPort(*server)
		}
		cfg, err := clientTLS(*caCert, *agentCert, *agentKey, name)
		if err != nil {
			logf("agent: %v", err)
			return 1
		}
		transport = grpc.WithTransportCredentials(credentials.NewTLS(cfg))
	}

	// Installed before connecting: a SIGTERM right after the "connected" event must drain, not kill.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dctx, dcancel := context.WithTimeout(ctx, 10*time.Second)
	// No WithBlock: Connect is fail-fast, so a refused TLS handshake ends it with Unavailable at once.
	cc, err := grpc.DialContext(dctx, *server, transport)
	dcancel()
	if err != nil {
		event("connect-failed error=%q", err.Error())
		return 1
	}
	defer cc.Close()

	md := metadata.MD{}
	if *agentID != "" { // empty: no agentid header at all, which the server must refuse
		md.Append("agentid", *agentID)
	}
	if *identifiers != "" {
		md.Append("agentidentifiers", *identifiers)
	}
	stream, err := NewAgentServiceClient(cc).Connect(metadata.NewOutgoingContext(ctx, md))
	if err != nil {
		event("connect-failed error=%q", err.Error())
		return 1
	}
	// The spec: the server sends serverid/servercount before any packet, and no packet is coming yet,
	// so a server that delays its headers until its first message leaves Header() blocked here.
	type headerResult struct {
		md  metadata.MD
		err error
	}
	hc := make(chan headerResult, 1)
	go func() {
		h, err := stream.Header()
		hc <- headerResult{h, err}
	}()
	var header metadata.MD
	select {
	case r := <-hc:
		if r.err != nil {
			event("connect-failed error=%q", r.err.Error())
			return 1
		}
		header = r.md
	case <-time.After(*headerTimeout):
		event("connect-failed error=%q", "no response headers before the first packet")
		return 1
	}
	ids, counts := header.Get("serverid"), header.Get("servercount")
	if len(ids) != 1 || len(counts) != 1 {
		// A refused Connect is a trailers-only response: grpc-go's Header() then returns no error,
		// and the status comes from the next Recv.
		why := "want exactly one serverid and servercount header"
		if _, err := stream.Recv(); err != nil {
			why += ": " + errText(err)
		}
		event("connect-failed error=%q", why)
		return 1
	}
	event("connected serverid=%s servercount=%s", ids[0], counts[0])

	a := &agent{
		out:         &packetSender{send: stream.Send},
		dialTimeout: *dialTimeout,
		queue:       *queue,
		conns:       map[int64]*endpoint{},
		pending:     map[int64]context.CancelFunc{},
	}
	// First SIGTERM: DRAIN (no new dials); the second one stops the agent. A "drain" line on stdin
	// counts as the first: a test harness may start us with SIGTERM blocked (Go honours an
	// inherited signal mask).
	stdinDrain := make(chan struct{}, 1)
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			if sc.Text() == "drain" {
				stdinDrain <- struct{}{}
			}
		}
	}()
	go func() {
		select {
		case <-sigs:
		case <-stdinDrain:
		}
		a.out.Send(drainPkt())
		event("drain-sent")
		<-sigs
		a.closeAll()
		os.Exit(0)
	}()

	for {
		pkt, err := stream.Recv()
		if err != nil {
			a.closeAll()
			event("stream-ended error=%q", err.Error())
			return 1
		}
		switch pkt.Type {
		case PacketType_DIAL_REQ:
			r := pkt.GetDialRequest()
			a.mu.Lock()
			dctx, dcancel := context.WithTimeout(context.Background(), a.dialTimeout)
			a.pending[r.Random] = dcancel
			a.mu.Unlock()
			go a.dial(dctx, dcancel, r)
		case PacketType_DATA:
			a.data(pkt.GetData())
		case PacketType_CLOSE_REQ:
			a.closeRequest(pkt.GetCloseRequest().ConnectID)
		case PacketType_DIAL_CLS:
			random := pkt.GetCloseDial().Random
			a.mu.Lock()
			c := a.pending[random]
			delete(a.pending, random)
			a.mu.Unlock()
			if c != nil {
				c()
			}
			event("dial-cls random=%d", random)
		default:
			event("unexpected-packet type=%d", int32(pkt.Type))
		}
	}
}

func (a *agent) dial(ctx context.Context, cancel context.CancelFunc, r *DialRequest) {
	defer cancel()
	var conn net.Conn
	var err error
	if r.Protocol != "tcp" {
		err = &net.AddrError{Err: "unsupported protocol " + r.Protocol, Addr: r.Address}
	} else {
		var d net.Dialer
		conn, err = d.DialContext(ctx, "tcp", r.Address)
	}
	a.mu.Lock()
	_, wanted := a.pending[r.Random]
	delete(a.pending, r.Random)
	if !wanted { // DIAL_CLS came first: the dialer has given up, so nobody waits for an answer
		a.mu.Unlock()
		if conn != nil {
			conn.Close()
		}
		return
	}
	if err != nil {
		a.mu.Unlock()
		event("dial-failed random=%d error=%q", r.Random, err.Error())
		a.out.Send(dialRsp(r.Random, 0, err.Error()))
		return
	}
	a.nextID++
	e := &endpoint{id: a.nextID, conn: conn, writes: make(chan []byte, a.queue), done: make(chan struct{})}
	a.conns[e.id] = e
	a.mu.Unlock()
	event("dialed random=%d connectID=%d address=%s", r.Random, e.id, r.Address)
	if err := a.out.Send(dialRsp(r.Random, e.id, "")); err != nil {
		e.close()
		return
	}
	go a.writeLoop(e)
	go a.readLoop(e)
}

func (a *agent) readLoop(e *endpoint) {
	buf := make([]byte, 4096)
	for {
		n, err := e.conn.Read(buf)
		if n > 0 {
			b := make([]byte, n)
			copy(b, buf[:n])
			if a.out.Send(dataPkt(e.id, b)) != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	if a.remove(e.id) != nil { // remote EOF, not a CLOSE_REQ: tell the server (unsolicited CLOSE_RSP)
		e.close()
		event("remote-closed connectID=%d", e.id)
		a.out.Send(closeRsp(e.id, ""))
	}
}

func (a *agent) writeLoop(e *endpoint) {
	for {
		select {
		case b, ok := <-e.writes:
			if !ok { // CLOSE_REQ after everything queued before it was written
				e.close()
				return
			}
			if _, err := e.conn.Write(b); err != nil {
				e.close()
				return
			}
		case <-e.done:
			return
		}
	}
}

// data runs on the receive goroutine, like closeRequest, so it never races with close(e.writes).
func (a *agent) data(d *Data) {
	a.mu.Lock()
	e := a.conns[d.ConnectID]
	a.mu.Unlock()
	if e == nil {
		event("unknown-data connectID=%d", d.ConnectID)
		a.out.Send(closeRsp(d.ConnectID, "unrecognized connectID"))
		return
	}
	select {
	case e.writes <- d.Data:
	case <-e.done:
	}
}

func (a *agent) closeRequest(id int64) {
	e := a.remove(id)
	if e == nil {
		event("close-req-unknown connectID=%d", id)
		a.out.Send(closeRsp(id, "Unknown connectID"))
		return
	}
	// The writer closes the socket once the DATA queued before this CLOSE_REQ is written.
	close(e.writes)
	event("closed connectID=%d", id)
	a.out.Send(closeRsp(id, ""))
}

func (a *agent) remove(id int64) *endpoint {
	a.mu.Lock()
	defer a.mu.Unlock()
	e := a.conns[id]
	delete(a.conns, id)
	return e
}

func (a *agent) closeAll() {
	a.mu.Lock()
	conns := a.conns
	a.conns = map[int64]*endpoint{}
	for _, c := range a.pending {
		c()
	}
	a.mu.Unlock()
	for _, e := range conns {
		e.close()
	}
}
