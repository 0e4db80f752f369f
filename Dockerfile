# The tunnelprobe image that deploy/ names: the statically linked binary,
# alone, FROM scratch, so it builds where no image can be pulled:
#
#   CGO_ENABLED=0 go build -o tunnelprobe ./cmd/tunnelprobe
#   docker build -t tunnelprobe .
#
# Scratch has no CA certificates: the binary embeds the Mozilla roots and
# its tls and https checks trust them where the system has none; --tls-ca
# FILE replaces them (serve logs which roots at start, docs/serve.md).
# Scratch has no shell either: --heal-cmd needs an image that has /bin/sh.
# The health server listens on 9999; run it as any user. It is the
# container's PID 1 and reaps the orphans its heals leave
# (docs/serve.md#pid-1).
FROM scratch
COPY tunnelprobe /tunnelprobe
USER 65534:65534
EXPOSE 9999
ENTRYPOINT ["/tunnelprobe"]
CMD ["serve"]
