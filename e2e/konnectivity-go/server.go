package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// proxyServer is a minimal upstream-like proxy-server: AgentService.Connect for agents and an
// HTTP-CONNECT frontend, one tunneled connection per CONNECT socket.
type proxyServer struct {
	UnimplementedAgentServiceServer
	id    string
	count int

	mu      sync.Mutex
	agents  []*agentStream
	pending map[int64]*pendingDial
	rnd     *rand.Rand
}

type pendingDial struct {
	agent  *agentStream
	conn   net.Conn
	result chan *DialResponse
}

// agentStream is one connected agent; conns holds its established CONNECT sockets by connectID.
type agentStream struct {
	id       string
	out      *packetSender
	draining bool
	conns    map[int64]net.Conn
}

func runServer(args []string) int {
	fs := flag.NewFlagSet("server", flag.ExitOnError)
	agentPort := fs.Int("agent-port", 0, "AgentService port (0: any)")
	proxyPort := fs.Int("proxy-port", 0, "HTTP-CONNECT port (0: any)")
	serverID := fs.String("server-id", "go-server", "sent as the serverid header")
	serverCount := fs.Int("server-count", 1, "sent as the servercount header")
	clusterCert := fs.String("cluster-cert", "", "agent listener certificate; turns TLS on")
	clusterKey := fs.String("cluster-key", "", "agent listener key")
	clusterCA := fs.String("cluster-ca-cert", "", "CA for agent client certificates (mTLS)")
	fs.Parse(args)

	s := &proxyServer{id: *serverID, count: *serverCount, pending: map[int64]*pendingDial{},
		rnd: rand.New(rand.NewSource(time.Now().UnixNano()))}
	al, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", *agentPort))
	if err != nil {
		logf("server: %v", err)
		return 1
	}
	pl, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", *proxyPort))
	if err != nil {
		logf("server: %v", err)
		return 1
	}
	var opts []grpc.ServerOption
	if *clusterCert != "" {
		cfg, err := serverTLS(*clusterCert, *clusterKey, *clusterCA)
		if err != nil {
			logf("server: %v", err)
			return 1
		}
		opts = append(opts, grpc.Creds(credentials.NewTLS(cfg)))
	}
	g := grpc.NewServer(opts...)
	RegisterAgentServiceServer(g, s)
	go func() {
		for {
			c, err := pl.Accept()
			if err != nil {
				return
			}
			go s.serveConnect(c)
		}
	}()
	event("listening agent-port=%d proxy-port=%d", al.Addr().(*net.TCPAddr).Port, pl.Addr().(*net.TCPAddr).Port)
	if err := g.Serve(al); err != nil {
		logf("server: %v", err)
		return 1
	}
	return 0
}

func (s *proxyServer) Connect(stream AgentService_ConnectServer) error {
	md, _ := metadata.FromIncomingContext(stream.Context())
	ids := md.Get("agentid")
	if len(ids) != 1 {
		event("agent-rejected agentid-values=%d", len(ids))
		return status.Errorf(codes.InvalidArgument, "expected one agent ID in the context, got %v", ids)
	}
	if err := stream.SendHeader(metadata.Pairs("serverid", s.id, "servercount", strconv.Itoa(s.count))); err != nil {
		return err
	}
	keys := make([]string, 0, len(md))
	for k, v := range md {
		keys = append(keys, fmt.Sprintf("%s=%d", k, len(v)))
	}
	sort.Strings(keys)
	a := &agentStream{id: ids[0], out: &packetSender{send: stream.Send}, conns: map[int64]net.Conn{}}
	s.mu.Lock()
	s.agents = append(s.agents, a)
	s.mu.Unlock()
	clientCert := "none"
	if p, ok := peer.FromContext(stream.Context()); ok {
		if ti, ok := p.AuthInfo.(credentials.TLSInfo); ok && len(ti.State.PeerCertificates) > 0 {
			clientCert = ti.State.PeerCertificates[0].Subject.CommonName
		}
	}
	event("agent-connected agentid=%s identifiers=%q metadata=%s client-cert=%s", a.id, strings.Join(md.Get("agentidentifiers"), ","), strings.Join(keys, ","), clientCert)
	defer s.agentGone(a)

	for {
		pkt, err := stream.Recv()
		if err != nil {
			event("agent-disconnected agentid=%s error=%q", a.id, errText(err))
			return nil
		}
		switch pkt.Type {
		case PacketType_DIAL_RSP:
			r := pkt.GetDialResponse()
			s.mu.Lock()
			p := s.pending[r.Random]
			delete(s.pending, r.Random)
			s.mu.Unlock()
			if p == nil {
				event("dial-rsp-unknown random=%d connectID=%d", r.Random, r.ConnectID)
				if r.ConnectID != 0 {
					a.out.Send(closeReq(r.ConnectID))
				}
				continue
			}
			if r.Error == "" {
				// Established here, on the receive goroutine, before the next packet is read: DATA
				// (even a remote close) may follow the DIAL_RSP at once.
				s.mu.Lock()
				a.conns[r.ConnectID] = p.conn
				s.mu.Unlock()
				io.WriteString(p.conn, "HTTP/1.1 200 Connection Established\r\n\r\n")
			}
			p.result <- r
		case PacketType_DATA:
			d := pkt.GetData()
			s.mu.Lock()
			c := a.conns[d.ConnectID]
			s.mu.Unlock()
			if c == nil {
				event("data-unknown connectID=%d", d.ConnectID)
				continue
			}
			// A blocking write on the receive goroutine: upstream's behaviour (a slow client stalls
			// the agent stream), which is fine for a test peer.
			if _, err := c.Write(d.Data); err != nil {
				c.Close()
			}
		case PacketType_CLOSE_RSP:
			r := pkt.GetCloseResponse()
			s.mu.Lock()
			c := a.conns[r.ConnectID]
			delete(a.conns, r.ConnectID)
			s.mu.Unlock()
			event("close-rsp connectID=%d error=%q known=%t", r.ConnectID, r.Error, c != nil)
			if c != nil {
				c.Close()
			}
		case PacketType_DRAIN:
			s.mu.Lock()
			a.draining = true
			s.mu.Unlock()
			event("agent-draining agentid=%s", a.id)
		default:
			event("unexpected-packet type=%d", int32(pkt.Type))
		}
	}
}

// agentGone closes the agent's sockets and fails its pending dials.
func (s *proxyServer) agentGone(a *agentStream) {
	s.mu.Lock()
	for i, x := range s.agents {
		if x == a {
			s.agents = append(s.agents[:i], s.agents[i+1:]...)
			break
		}
	}
	conns := a.conns
	a.conns = map[int64]net.Conn{}
	var failed []*pendingDial
	for r, p := range s.pending {
		if p.agent == a {
			delete(s.pending, r)
			failed = append(failed, p)
		}
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
	for _, p := range failed {
		p.result <- &DialResponse{Error: "agent " + a.id + " disconnected"}
	}
}

func (s *proxyServer) pick() *agentStream {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ready []*agentStream
	for _, a := range s.agents {
		if !a.draining {
			ready = append(ready, a)
		}
	}
	if len(ready) == 0 {
		ready = s.agents
	}
	if len(ready) == 0 {
		return nil
	}
	return ready[s.rnd.Intn(len(ready))]
}

func writeStatus(c net.Conn, code int, text, body string) {
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\n\r\n%s", code, text, len(body), body)
}

func (s *proxyServer) serveConnect(c net.Conn) {
	c.SetReadDeadline(time.Now().Add(60 * time.Second))
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil {
		writeStatus(c, 400, "Bad Request", err.Error())
		c.Close()
		return
	}
	c.SetReadDeadline(time.Time{})
	if req.Method != http.MethodConnect {
		writeStatus(c, 405, "Method Not Allowed", "this proxy only supports CONNECT passthrough")
		c.Close()
		return
	}
	a := s.pick()
	if a == nil {
		writeStatus(c, 500, "Internal Server Error", "currently no tunnels available: No agent available")
		c.Close()
		return
	}
	p := &pendingDial{agent: a, conn: c, result: make(chan *DialResponse, 1)}
	s.mu.Lock()
	random := s.rnd.Int63()
	s.pending[random] = p
	s.mu.Unlock()
	if err := a.out.Send(dialReq(req.Host, random)); err != nil {
		s.mu.Lock()
		delete(s.pending, random)
		s.mu.Unlock()
		writeStatus(c, 502, "Bad Gateway", err.Error())
		c.Close()
		return
	}
	r := <-p.result
	if r.Error != "" {
		code, text := 502, "Bad Gateway"
		if strings.Contains(r.Error, "timeout") || strings.Contains(r.Error, "deadline exceeded") {
			code, text = 504, "Gateway Timeout"
		}
		event("connect-failed host=%s error=%q", req.Host, r.Error)
		writeStatus(c, code, text, r.Error)
		c.Close()
		return
	}
	id := r.ConnectID
	event("connect-established host=%s connectID=%d", req.Host, id)
	buf := make([]byte, 32*1024)
	for {
		n, err := br.Read(buf)
		if n > 0 {
			b := make([]byte, n)
			copy(b, buf[:n])
			if a.out.Send(dataPkt(id, b)) != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	// Client EOF: CLOSE_REQ; the socket closes when the agent's CLOSE_RSP arrives.
	s.mu.Lock()
	_, open := a.conns[id]
	s.mu.Unlock()
	if open {
		a.out.Send(closeReq(id))
		event("close-req-sent connectID=%d", id)
	}
}
