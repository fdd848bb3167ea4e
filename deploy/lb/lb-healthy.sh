#!/bin/bash
# The lb container's healthcheck: HAProxy's monitor URI (haproxy.cfg, frontend `monitor`) answers
# 200 while at least one ingress, one edge and auth pass their checks, 503 otherwise.
exec 3<>/dev/tcp/127.0.0.1/8404 || exit 1
printf 'GET /healthz HTTP/1.0\r\n\r\n' >&3
read -r _ status _ <&3
[[ $status == 200 ]]
