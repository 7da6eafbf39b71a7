#!/bin/sh
# docker-compose.yml, the streaming replica: on its first start (an empty volume) it clones the primary with
# `pg_basebackup -R`, which writes primary_conninfo (with application_name, the name synchronous_standby_names uses)
# and standby.signal; then it runs the image's own entrypoint, which starts it as a hot standby.
set -eu
: "${PRIMARY_HOST:?}" "${POSTGRES_REPLICATION_USER:?}" "${POSTGRES_REPLICATION_PASSWORD:?}" "${REPLICA_NAME:?}" "${PGDATA:?}"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  until pg_isready -q -h "$PRIMARY_HOST" -p 5432; do
    echo "replica: waiting for $PRIMARY_HOST"
    sleep 1
  done
  pg_basebackup \
    -d "host=$PRIMARY_HOST port=5432 user=$POSTGRES_REPLICATION_USER password=$POSTGRES_REPLICATION_PASSWORD application_name=$REPLICA_NAME" \
    -D "$PGDATA" -R -X stream -c fast -S "$REPLICA_NAME"
  chmod 0700 "$PGDATA"
fi
# hot_standby_feedback: a long export on the replica is not cancelled by the primary's vacuum (a little bloat instead).
exec docker-entrypoint.sh postgres -c hot_standby=on -c hot_standby_feedback=on
