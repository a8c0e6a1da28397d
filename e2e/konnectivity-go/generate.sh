#!/usr/bin/env bash
# Regenerates konnectivity.pb.go and konnectivity_grpc.pb.go from konnectivity.proto (Debian:
# protobuf-compiler protoc-gen-go protoc-gen-go-grpc). The generated files are committed, so building
# the binary needs only golang-go, golang-google-grpc-dev and golang-google-protobuf-dev.
set -euo pipefail
cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")"
protoc --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative konnectivity.proto
