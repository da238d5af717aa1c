# syntax=docker/dockerfile:1
# Multi-stage build of the Kafka ChatOps bot: a static Go binary on a minimal,
# non-root base. The build stage runs hack/build-bot.sh, the same script CI
# runs (and checks the output is static), so what CI tests is what ships.
#
# Without Docker, `bash hack/build-image.sh` builds the same runtime shape
# (user, entrypoint, command, labels) as an OCI tarball; a test
# (internal/ociimage/botimage) compares the two. With Docker:
#
#   docker build --build-arg VERSION="$(cat VERSION)" \
#     --build-arg REVISION="$(git rev-parse HEAD)" \
#     --build-arg CREATED="$(date -u -d @"$(git log -1 --format=%ct)" +%Y-%m-%dT%H:%M:%SZ)" .

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN VERSION="${VERSION}" bash hack/build-bot.sh /out/bot

# distroless/static: CA certificates and tzdata, no shell, no package manager.
FROM gcr.io/distroless/static-debian12:nonroot
ARG VERSION=dev
ARG REVISION=unknown
ARG CREATED=1970-01-01T00:00:00Z
LABEL org.opencontainers.image.title="kafkabot" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.source="https://github.com/kafka-chatops/kafkabot" \
      org.opencontainers.image.created="${CREATED}"
COPY --from=build /out/bot /bot
# 65532 is distroless' "nonroot"; numeric so runAsNonRoot can verify it.
USER 65532:65532
ENTRYPOINT ["/bot"]
CMD ["serve"]
