# syntax=docker/dockerfile:1
# Multi-stage build of the Kafka ChatOps bot: a static Go binary on a minimal,
# non-root base. The build stage runs hack/build-bot.sh, the same script CI
# runs (and checks the output is static), so what CI tests is what ships.

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN VERSION="${VERSION}" bash hack/build-bot.sh /out/bot

# distroless/static: CA certificates and tzdata, no shell, no package manager.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/bot /bot
# 65532 is distroless' "nonroot"; numeric so runAsNonRoot can verify it.
USER 65532:65532
ENTRYPOINT ["/bot"]
CMD ["serve"]
