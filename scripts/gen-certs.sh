#!/usr/bin/env bash
# Creates a local certificate authority and a localhost certificate it signs, for Herald's TLS
# listeners (and NATS) on a developer machine or a private deployment.
#
#   scripts/gen-certs.sh DIR
#
# DIR/ca.crt, DIR/ca.key    the local CA (made once, kept afterwards)
# DIR/tls.crt, DIR/tls.key  the server certificate: DNS:localhost, IP:127.0.0.1, IP:::1
#
# Existing files are kept. The server certificate is re-issued only when it is missing, was not
# signed by DIR/ca.crt, or expires within 7 days. HERALD_TLS_SANS adds names to a newly issued
# server certificate, e.g. HERALD_TLS_SANS="DNS:nats,DNS:herald.internal" for docker compose.
set -euo pipefail

usage() {
  echo "usage: $0 DIR   (creates DIR/ca.crt, DIR/ca.key, DIR/tls.crt, DIR/tls.key)" >&2
  exit 2
}
[[ $# -eq 1 && -n $1 ]] || usage
command -v openssl >/dev/null 2>&1 || {
  echo 'gen-certs: openssl is not installed: run make deps (apt-get install openssl)' >&2
  exit 1
}

DIR=$1
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
CA_DAYS=3650
# 825 days is the longest validity Apple platforms accept for a TLS server certificate.
LEAF_DAYS=825
LEAF_MIN_SECONDS=$((7 * 24 * 3600))

umask 077
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

created=()

if [[ -s $DIR/ca.crt && -s $DIR/ca.key ]]; then
  :
elif [[ -e $DIR/ca.crt || -e $DIR/ca.key ]]; then
  echo "gen-certs: $DIR holds only one of ca.crt/ca.key: remove the other (or restore it) and rerun" >&2
  exit 1
else
  cat >"$work/ca.cnf" <<'EOF'
[req]
distinguished_name = dn
prompt = no
x509_extensions = ca_ext
[dn]
CN = Herald Local Development CA
O = Herald
[ca_ext]
basicConstraints = critical, CA:true, pathlen:0
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
EOF
  openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -days "$CA_DAYS" -config "$work/ca.cnf" -keyout "$DIR/ca.key" -out "$DIR/ca.crt" 2>/dev/null
  chmod 600 "$DIR/ca.key"
  chmod 644 "$DIR/ca.crt"
  created+=(ca.crt ca.key)
fi

leaf_ok() {
  [[ -s $DIR/tls.crt && -s $DIR/tls.key ]] &&
    openssl verify -CAfile "$DIR/ca.crt" "$DIR/tls.crt" >/dev/null 2>&1 &&
    openssl x509 -in "$DIR/tls.crt" -noout -checkend "$LEAF_MIN_SECONDS" >/dev/null 2>&1
}

if ! leaf_ok; then
  sans="DNS:localhost,IP:127.0.0.1,IP:::1${HERALD_TLS_SANS:+,$HERALD_TLS_SANS}"
  cat >"$work/leaf.cnf" <<EOF
[req]
distinguished_name = dn
prompt = no
[dn]
CN = localhost
O = Herald
[leaf_ext]
basicConstraints = critical, CA:false
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth, clientAuth
subjectAltName = $sans
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
EOF
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -config "$work/leaf.cnf" -keyout "$work/tls.key" -out "$work/tls.csr" 2>/dev/null
  openssl x509 -req -in "$work/tls.csr" -CA "$DIR/ca.crt" -CAkey "$DIR/ca.key" \
    -CAcreateserial -CAserial "$work/ca.srl" -days "$LEAF_DAYS" -sha256 \
    -extfile "$work/leaf.cnf" -extensions leaf_ext -out "$work/tls.crt" 2>/dev/null
  # Replace both files only once both exist, so a failure never leaves a mismatched pair.
  mv "$work/tls.key" "$DIR/tls.key"
  mv "$work/tls.crt" "$DIR/tls.crt"
  chmod 600 "$DIR/tls.key"
  chmod 644 "$DIR/tls.crt"
  created+=(tls.crt tls.key)
fi

if [[ ${#created[@]} -eq 0 ]]; then
  echo "gen-certs: kept the existing CA and certificate in $DIR"
else
  echo "gen-certs: created ${created[*]} in $DIR"
fi

cat <<EOF

Trust the local CA ($DIR/ca.crt) where you need it, then undo that when you are done
(anyone holding $DIR/ca.key can mint certificates your machine would accept):
  Debian/Ubuntu:  sudo cp $DIR/ca.crt /usr/local/share/ca-certificates/herald-dev-ca.crt && sudo update-ca-certificates
  macOS:          sudo security add-trusted-cert -d -r trustRoot -k /Library/Keychains/System.keychain $DIR/ca.crt
  Chrome (Linux): certutil -d sql:\$HOME/.pki/nssdb -A -t C,, -n herald-dev-ca -i $DIR/ca.crt
  Firefox:        Settings > Privacy & Security > Certificates > View Certificates > Authorities >
                  Import $DIR/ca.crt, tick "Trust this CA to identify websites"
  Node:           NODE_EXTRA_CA_CERTS=$DIR/ca.crt node your-script.js
  curl:           curl --cacert $DIR/ca.crt https://localhost:8443/healthz
EOF
