#!/bin/sh
# docker-compose.yml, the primary's first start only (/docker-entrypoint-initdb.d): the replication user, the line of
# pg_hba.conf that lets it stream, and the replica's physical slot (the primary keeps the WAL the replica has not yet
# received, up to max_slot_wal_keep_size).
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
  -v user="$POSTGRES_REPLICATION_USER" -v password="$POSTGRES_REPLICATION_PASSWORD" -v slot="$REPLICA_NAME" <<'SQL'
CREATE ROLE :"user" WITH REPLICATION LOGIN PASSWORD :'password';
SELECT pg_create_physical_replication_slot(:'slot');
SQL
echo "host replication $POSTGRES_REPLICATION_USER all scram-sha-256" >> "$PGDATA/pg_hba.conf"
