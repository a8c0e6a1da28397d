// Command konnectivity-go is a second, independent implementation of the Konnectivity tunnel
// protocol on grpc-go, written from shared/specs/konnectivity.md, that Portage's interop tests run
// against Portage's server and agent. Subcommands:
//
//	agent  -server HOST:PORT -agent-id ID [-agent-identifiers Q]   like upstream proxy-agent
//	client -proxy HOST:PORT -address HOST:PORT [-expect-bytes N]    like upstream's gRPC test client
//	bench  -proxy HOST:PORT -address HOST:PORT [-bytes N] [-dials N] [-serve]   bench/tunnel-bench.sh's grpcgo route
//	server [-agent-port P] [-proxy-port P] [-server-id ID]          like upstream proxy-server (http-connect)
//
// Machine-readable events go to stdout, one per line; diagnostics go to stderr.
package main

import (
	"fmt"
	"os"
	"sync"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var code int
	switch os.Args[1] {
	case "agent":
		code = runAgent(os.Args[2:])
	case "bench":
		code = runBench(os.Args[2:])
	case "client":
		code = runClient(os.Args[2:])
	case "server":
		code = runServer(os.Args[2:])
	default:
		usage()
	}
	os.Exit(code)
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: konnectivity-go agent|bench|client|server [flags]")
	os.Exit(64)
}

var outMu sync.Mutex

// event writes one machine-readable line to stdout (the interop tests wait for these).
func event(format string, args ...interface{}) {
	outMu.Lock()
	defer outMu.Unlock()
	fmt.Fprintf(os.Stdout, format+"\n", args...)
}

// logf writes one diagnostic line to stderr.
func logf(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
}

// packetSender serialises Send on a stream: grpc-go streams allow one sending goroutine at a time.
type packetSender struct {
	mu   sync.Mutex
	send func(*Packet) error
}

func (s *packetSender) Send(p *Packet) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.send(p)
}

func dialReq(address string, random int64) *Packet {
	return &Packet{Type: PacketType_DIAL_REQ, Payload: &Packet_DialRequest{DialRequest: &DialRequest{Protocol: "tcp", Address: address, Random: random}}}
}

func dialRsp(random, connectID int64, errText string) *Packet {
	return &Packet{Type: PacketType_DIAL_RSP, Payload: &Packet_DialResponse{DialResponse: &DialResponse{Random: random, ConnectID: connectID, Error: errText}}}
}

func dataPkt(connectID int64, b []byte) *Packet {
	return &Packet{Type: PacketType_DATA, Payload: &Packet_Data{Data: &Data{ConnectID: connectID, Data: b}}}
}

func closeReq(connectID int64) *Packet {
	return &Packet{Type: PacketType_CLOSE_REQ, Payload: &Packet_CloseRequest{CloseRequest: &CloseRequest{ConnectID: connectID}}}
}

func closeRsp(connectID int64, errText string) *Packet {
	return &Packet{Type: PacketType_CLOSE_RSP, Payload: &Packet_CloseResponse{CloseResponse: &CloseResponse{ConnectID: connectID, Error: errText}}}
}

func closeDial(random int64) *Packet {
	return &Packet{Type: PacketType_DIAL_CLS, Payload: &Packet_CloseDial{CloseDial: &CloseDial{Random: random}}}
}

func drainPkt() *Packet {
	return &Packet{Type: PacketType_DRAIN, Payload: &Packet_Drain{Drain: &Drain{}}}
}
