#!/usr/bin/env bash
# Makes sure a local PostgreSQL runs for the tests and prints the
# environment they read:
#
#   eval "$(scripts/postgres.sh)"
#
# When $CAIRN_TEST_POSTGRES is set already it is used as it is. Otherwise
# the local server on 127.0.0.1:5432 is started if it is down (and, under
# CI, installed from Debian's packages if it is missing), the database
# "test" is made if missing, and CAIRN_TEST_POSTGRES names it. Without a
# server, outside CI, it prints nothing and the PostgreSQL tests are
# skipped; under CI it fails. Idempotent.
set -euo pipefail
if [ -n "${CAIRN_TEST_POSTGRES:-}" ]; then
  echo "export CAIRN_TEST_POSTGRES='$CAIRN_TEST_POSTGRES'"
  exit 0
fi
sudo=""
[ "$(id -u)" = 0 ] || sudo="sudo -n"
fail() {
  if [ -n "${CI:-}" ]; then echo "postgres.sh: $1" >&2; exit 1; fi
  echo "postgres.sh: $1: the PostgreSQL tests will be skipped" >&2
  exit 0
}
if ! command -v pg_ctlcluster >/dev/null 2>&1; then
  [ -n "${CI:-}" ] || fail "no PostgreSQL installed"
  echo "postgres.sh: installing PostgreSQL" >&2
  $sudo apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq postgresql >/dev/null
fi
if ! pg_isready -q -h 127.0.0.1 -p 5432; then
  cluster=$(pg_lsclusters --no-header 2>/dev/null | awk 'NR == 1 { print $1 " " $2 }')
  [ -n "$cluster" ] || fail "no PostgreSQL cluster"
  echo "postgres.sh: starting PostgreSQL $cluster" >&2
  # shellcheck disable=SC2086
  $sudo pg_ctlcluster --skip-systemctl-redirect $cluster start >&2 || fail "PostgreSQL $cluster did not start"
  for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
  pg_isready -q -h 127.0.0.1 -p 5432 || fail "PostgreSQL does not answer on 127.0.0.1:5432"
fi
user=${PGUSER:-postgres}
if ! psql -h 127.0.0.1 -U "$user" -d test -Atqc 'SELECT 1' >/dev/null 2>&1; then
  psql -h 127.0.0.1 -U "$user" -d postgres -qc 'CREATE DATABASE test' >&2 || fail "cannot make the database test as $user"
fi
echo "export CAIRN_TEST_POSTGRES='postgres://$user@127.0.0.1:5432/test'"
