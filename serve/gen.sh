#!/usr/bin/env bash
# Regenerates serve/cuzkpb from serve/proto/cuzk/v1/proving.proto with pinned
# code generators. protoc itself comes from the system (Debian bookworm:
# `apt-get install protobuf-compiler`, libprotoc 3.21.12); its version is
# recorded in the generated files' headers.
set -euo pipefail
cd "$(dirname "$0")"

PROTOC_GEN_GO=v1.36.12
PROTOC_GEN_GO_GRPC=v1.6.1

bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
GOBIN=$bin go install google.golang.org/protobuf/cmd/protoc-gen-go@$PROTOC_GEN_GO
GOBIN=$bin go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$PROTOC_GEN_GO_GRPC

rm -f cuzkpb/*.pb.go
PATH=$bin:$PATH protoc -I proto \
	--go_out=cuzkpb --go_opt=paths=source_relative \
	--go-grpc_out=cuzkpb --go-grpc_opt=paths=source_relative \
	cuzk/v1/proving.proto
# source_relative writes under cuzk/v1/; the package lives in cuzkpb itself.
mv cuzkpb/cuzk/v1/*.pb.go cuzkpb/
rm -r cuzkpb/cuzk
