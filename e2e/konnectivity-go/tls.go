package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
)

func certPool(caFile string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s: no PEM certificate", caFile)
	}
	return pool, nil
}

// clientTLS is the agent's side, as upstream's --ca-cert/--agent-cert/--agent-key: TLS 1.2+,
// the server verified against caFile, a client certificate when certFile is set.
func clientTLS(caFile, certFile, keyFile, serverName string) (*tls.Config, error) {
	pool, err := certPool(caFile)
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{RootCAs: pool, ServerName: serverName, MinVersion: tls.VersionTLS12}
	if certFile != "" {
		c, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{c}
	}
	return cfg, nil
}

// serverTLS is the agent listener's side, as upstream's --cluster-cert/--cluster-key and, for mTLS,
// --cluster-ca-cert.
func serverTLS(certFile, keyFile, clientCAFile string) (*tls.Config, error) {
	c, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{c}, MinVersion: tls.VersionTLS12}
	if clientCAFile != "" {
		pool, err := certPool(clientCAFile)
		if err != nil {
			return nil, err
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}
