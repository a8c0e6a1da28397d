package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"flag"
	"io"
	"math/rand"
	"os"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// runClient opens one ProxyService.Proxy stream, as kube-apiserver's konnectivity client does: one
// DIAL_REQ, then stdin → DATA, and DATA hashed (SHA-256, reported with the CLOSE_RSP event). It sends CLOSE_REQ at stdin EOF, or, with
// -expect-bytes, once that many bytes arrived, and exits 0 on the server's CLOSE_RSP.
func runClient(args []string) int {
	fs := flag.NewFlagSet("client", flag.ExitOnError)
	proxy := fs.String("proxy", "127.0.0.1:8090", "the server's gRPC frontend address")
	address := fs.String("address", "", "host:port the agent dials")
	expect := fs.Int64("expect-bytes", -1, "send CLOSE_REQ after this many bytes came back (-1: at stdin EOF)")
	outFile := fs.String("out", "", "also write the received bytes to this file")
	cancelAfterDial := fs.Bool("cancel-after-dial", false, "cancel the stream (RST_STREAM CANCEL) once dialed, then wait to be killed")
	dialClose := fs.Bool("dial-cls", false, "send DIAL_CLS right after DIAL_REQ and end the stream")
	fs.Parse(args)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dctx, dcancel := context.WithTimeout(ctx, 10*time.Second)
	cc, err := grpc.DialContext(dctx, *proxy, grpc.WithInsecure(), grpc.WithBlock(), grpc.WithUserAgent("konnectivity-go-client"))
	dcancel()
	if err != nil {
		logf("client: dial %s: %v", *proxy, err)
		return 1
	}
	defer cc.Close()
	stream, err := NewProxyServiceClient(cc).Proxy(metadata.NewOutgoingContext(ctx, metadata.MD{}))
	if err != nil {
		logf("client: Proxy: %v", err)
		return 1
	}
	out := &packetSender{send: stream.Send}
	random := rand.New(rand.NewSource(time.Now().UnixNano())).Int63()
	if err := out.Send(dialReq(*address, random)); err != nil {
		event("stream-ended error=%q", err.Error())
		return 3
	}
	if *dialClose {
		out.Send(closeDial(random))
		stream.CloseSend()
		event("dial-cls-sent random=%d", random)
		// Whatever comes back (nothing, or the stream's end) is reported; the server must not crash.
		pkt, err := stream.Recv()
		if err != nil {
			event("stream-ended error=%q", errText(err))
		} else {
			event("after-dial-cls type=%d", int32(pkt.Type))
		}
		return 0
	}
	pkt, err := stream.Recv()
	if err != nil {
		event("stream-ended error=%q", errText(err))
		return 3
	}
	rsp := pkt.GetDialResponse()
	if pkt.Type != PacketType_DIAL_RSP || rsp == nil || rsp.Random != random {
		event("protocol-error first packet type=%d", int32(pkt.Type))
		return 3
	}
	if rsp.Error != "" {
		event("dial-failed connectID=%d error=%q", rsp.ConnectID, rsp.Error)
		// Upstream's server ends the frontend stream after a failed dial.
		if _, err := stream.Recv(); err != nil {
			event("stream-ended error=%q", errText(err))
		}
		return 2
	}
	id := rsp.ConnectID
	event("dialed connectID=%d", id)
	if *cancelAfterDial {
		cancel()
		_, err := stream.Recv()
		event("cancelled error=%q", errText(err))
		time.Sleep(time.Hour) // the connection stays up: only the stream ended
	}

	var closeOnce sync.Once
	sendClose := func() {
		closeOnce.Do(func() {
			out.Send(closeReq(id))
			event("close-req-sent connectID=%d", id)
		})
	}
	go func() {
		buf := make([]byte, 32*1024)
		for {
			n, err := os.Stdin.Read(buf)
			if n > 0 {
				b := make([]byte, n)
				copy(b, buf[:n])
				if out.Send(dataPkt(id, b)) != nil {
					return
				}
			}
			if err != nil {
				if err == io.EOF && *expect < 0 {
					sendClose()
				}
				return
			}
		}
	}()

	// Received bytes are hashed (and written to -out): stdout carries the events.
	sum := sha256.New()
	var w io.Writer = sum
	if *outFile != "" {
		f, err := os.Create(*outFile)
		if err != nil {
			logf("client: %v", err)
			return 1
		}
		defer f.Close()
		bw := bufio.NewWriterSize(f, 64*1024)
		defer bw.Flush()
		w = io.MultiWriter(sum, bw)
	}
	var received int64
	if *expect == 0 {
		sendClose()
	}
	for {
		pkt, err := stream.Recv()
		if err != nil {
			event("stream-ended error=%q", errText(err))
			return 3
		}
		switch pkt.Type {
		case PacketType_DATA:
			d := pkt.GetData()
			if d.ConnectID != id {
				event("protocol-error data for connectID=%d", d.ConnectID)
				return 3
			}
			w.Write(d.Data)
			received += int64(len(d.Data))
			if *expect >= 0 && received >= *expect {
				sendClose()
			}
		case PacketType_CLOSE_RSP:
			c := pkt.GetCloseResponse()
			event("close-rsp connectID=%d error=%q received=%d sha256=%x", c.ConnectID, c.Error, received, sum.Sum(nil))
			stream.CloseSend()
			return 0
		default:
			event("unexpected-packet type=%d", int32(pkt.Type))
		}
	}
}

func errText(err error) string {
	if err == io.EOF {
		return "EOF"
	}
	return err.Error()
}
