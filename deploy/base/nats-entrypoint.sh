#!/bin/sh
# As the official nats image does: `docker run nats -js` means `nats-server -js`.
set -e
case "${1:-}" in
  -*) set -- nats-server "$@" ;;
esac
exec "$@"
