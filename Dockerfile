# The controller image: static binaries on a distroless base that runs as a non-root user and
# has no shell. Build with `make image` (needs a container engine).
#
#   docker build -t karpenter-provider-linode:dev .

FROM golang:1.26 AS builder
# Karpenter core needs Go 1.26.9 or newer: the go command fetches this toolchain from the module proxy.
ENV GOTOOLCHAIN=go1.27.3 CGO_ENABLED=0 GOFLAGS=-trimpath
ARG TARGETOS=linux
ARG TARGETARCH
ARG VERSION=dev
WORKDIR /src
# Dependencies first, so that a source change reuses the module layer.
COPY go.mod go.sum ./
RUN go mod download
COPY cmd/ cmd/
COPY pkg/ pkg/
RUN GOOS=${TARGETOS} GOARCH=${TARGETARCH} go build \
      -ldflags "-s -w -X sigs.k8s.io/karpenter/pkg/operator.Version=${VERSION}" \
      -o /out/ ./cmd/controller ./cmd/node-identity

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=builder /out/controller /controller
# Instance mode's node identity component runs from the same image (the chart's command).
COPY --from=builder /out/node-identity /node-identity
# 65532 is distroless's nonroot user; the chart's securityContext uses the same ids.
USER 65532:65532
ENTRYPOINT ["/controller"]
