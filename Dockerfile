# quotesync's container image: the static binary (CGO_ENABLED=0, as
# `make build` makes it) on distroless's static base, run as its non-root
# user. The base holds the CA roots (the insurer's HTTPS) and the time
# zones (sync.time_zone), and no shell.
#
#   docker build -t quotesync:$(git describe --tags --always --dirty) \
#     --build-arg VERSION=$(git describe --tags --always --dirty) .
#
# The Kubernetes example (deploy/kubernetes) runs it with
# `run --config /etc/quotesync/config.yaml --site SITE`.

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/quotesync ./cmd/quotesync

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/quotesync /usr/bin/quotesync
# nonroot: uid and gid 65532, as the Deployment's securityContext says.
USER 65532:65532
EXPOSE 9464
ENTRYPOINT ["/usr/bin/quotesync"]
CMD ["run", "--config", "/etc/quotesync/config.yaml"]
