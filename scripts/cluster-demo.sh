#!/usr/bin/env bash
# `make cluster-demo`: the project's dbt build on a Spark standalone cluster on this machine.
#
# Starts one master and two workers from the pyspark distribution (SPARK_HOME = pyspark's
# package folder; it has no sbin/start-*.sh, so spark-class runs the daemons directly), all on
# 127.0.0.1; lands a generated workload through the cluster; runs dbt with target `cluster`
# (executors run the Python models and the Python UDF with this venv's Python); and stops the
# cluster on the way out, whether the build passed or not.
#
#   scripts/cluster-demo.sh                 # dbt build
#   scripts/cluster-demo.sh run --select staging
#
# Environment (all optional):
#   CLUSTER_DEMO_DIR       work folder: warehouse, logs, generated data (default /tmp/cdc-unify-cluster-demo)
#   CLUSTER_DEMO_DATA      an existing `cdc-unify generate` output to land instead of generating one
#   CLUSTER_DEMO_EVENTS    row changes to generate (default 1000)
#   CLUSTER_MASTER_PORT    master port (default 7077)
#   CLUSTER_WORKER_CORES, CLUSTER_WORKER_MEMORY   per worker (default 1, 2g); one executor per worker
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=${CDC_UNIFY_BIN:-$ROOT/.venv/bin}
PYTHON=$BIN/python
WORK=${CLUSTER_DEMO_DIR:-/tmp/cdc-unify-cluster-demo}
EVENTS=${CLUSTER_DEMO_EVENTS:-1000}
DATA=${CLUSTER_DEMO_DATA:-}
PORT=${CLUSTER_MASTER_PORT:-7077}
WORKER_CORES=${CLUSTER_WORKER_CORES:-1}
WORKER_MEMORY=${CLUSTER_WORKER_MEMORY:-2g}
WORKERS=2
LOGS=$WORK/logs
WAREHOUSE=$WORK/warehouse
MASTER_URL=spark://127.0.0.1:$PORT

SPARK_HOME=$("$PYTHON" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')
# Every daemon, the driver and the executors bind to the loopback interface only (web UIs too).
export SPARK_HOME SPARK_LOCAL_IP=127.0.0.1 SPARK_LOCAL_HOSTNAME=localhost
export PYSPARK_PYTHON=$PYTHON
# The cluster's own daemons need little heap; the master's REST submission server (a fixed
# port, unused: dbt is the driver) stays off.
export SPARK_DAEMON_MEMORY=512m SPARK_MASTER_OPTS="-Dspark.master.rest.enabled=false"
APP_NAME=cdc-unify-dbt  # the `cluster` target's app_name

log() { echo "[cluster-demo] $*" >&2; }

pids=()
stop_cluster() {
    local status=$?
    if ((${#pids[@]})); then
        log "stopping the cluster (pids ${pids[*]})"
        kill "${pids[@]}" 2>/dev/null || true
        wait "${pids[@]}" 2>/dev/null || true
    fi
    exit "$status"
}
trap stop_cluster EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# wait_for_log FILE TEXT COUNT SECONDS: until FILE has COUNT lines containing TEXT.
wait_for_log() {
    local file=$1 text=$2 count=$3 deadline=$((SECONDS + $4))
    until [ "$(grep -c -F -- "$text" "$file" 2>/dev/null || true)" -ge "$count" ]; do
        if ((SECONDS > deadline)); then
            log "timed out waiting for '$text' in $file:"
            tail -n 20 "$file" >&2 || true
            return 1
        fi
        sleep 1
    done
}

if bash -c "exec 3<>/dev/tcp/127.0.0.1/$PORT" 2>/dev/null; then
    log "port $PORT is already in use (another cluster?); set CLUSTER_MASTER_PORT"
    exit 1
fi
[ -x "$SPARK_HOME/bin/spark-class" ] || { log "no bin/spark-class in $SPARK_HOME"; exit 1; }

rm -rf "$WAREHOUSE" "$LOGS" "$WORK/workers" "$WORK/target"
mkdir -p "$LOGS" "$WORK/workers"

log "starting the master at $MASTER_URL (SPARK_HOME=$SPARK_HOME)"
"$SPARK_HOME/bin/spark-class" org.apache.spark.deploy.master.Master \
    --host 127.0.0.1 --port "$PORT" --webui-port 0 >"$LOGS/master.log" 2>&1 &
pids+=($!)
wait_for_log "$LOGS/master.log" "I have been elected leader" 1 120

for n in $(seq 1 "$WORKERS"); do
    log "starting worker $n ($WORKER_CORES core(s), $WORKER_MEMORY)"
    "$SPARK_HOME/bin/spark-class" org.apache.spark.deploy.worker.Worker \
        --host 127.0.0.1 --webui-port 0 --cores "$WORKER_CORES" --memory "$WORKER_MEMORY" \
        --work-dir "$WORK/workers/$n" "$MASTER_URL" >"$LOGS/worker-$n.log" 2>&1 &
    pids+=($!)
done
wait_for_log "$LOGS/master.log" "Registering worker" "$WORKERS" 120
log "cluster up: 1 master, $WORKERS workers"

if [ -z "$DATA" ]; then
    DATA=$WORK/data
    log "generating $EVENTS row changes in every dialect -> $DATA"
    "$BIN/cdc-unify" generate --events "$EVENTS" --out "$DATA" >"$LOGS/generate.log"
fi
for batch in 1 2; do
    log "landing batch $batch of $DATA through the cluster"
    "$PYTHON" "$ROOT/bench/spark_steps.py" land --master "$MASTER_URL" --warehouse "$WAREHOUSE" \
        --data-dir "$DATA" --batch "$batch" --result "$LOGS/land-$batch.json" 2>>"$LOGS/land.log"
done

# The `cluster` target of profiles/profiles.yml, sized for this machine: one 1-core executor per
# worker; few shuffle partitions for a small workload.
export DBT_PROFILES_DIR=$ROOT/profiles DBT_TARGET_PATH=$WORK/target DBT_LOG_PATH=$LOGS/dbt
export DBT_SEND_ANONYMOUS_USAGE_STATS=false
export CDC_UNIFY_TARGET=cluster CDC_UNIFY_SPARK_MASTER=$MASTER_URL CDC_UNIFY_WAREHOUSE=$WAREHOUSE
export CDC_UNIFY_EXECUTOR_PYTHON=$PYTHON
export CDC_UNIFY_DRIVER_MEMORY=${CDC_UNIFY_DRIVER_MEMORY:-2g}
export CDC_UNIFY_EXECUTOR_MEMORY=${CDC_UNIFY_EXECUTOR_MEMORY:-1g}
export CDC_UNIFY_EXECUTOR_CORES=${CDC_UNIFY_EXECUTOR_CORES:-$WORKER_CORES}
export CDC_UNIFY_EXECUTOR_INSTANCES=${CDC_UNIFY_EXECUTOR_INSTANCES:-$WORKERS}
export CDC_UNIFY_SHUFFLE_PARTITIONS=${CDC_UNIFY_SHUFFLE_PARTITIONS:-4}

dbt_args=("$@")
((${#dbt_args[@]})) || dbt_args=(build)
log "dbt ${dbt_args[*]} --target cluster"
status=0
"$BIN/dbt" "${dbt_args[@]}" --project-dir "$ROOT" || status=$?

# The master names the application dbt registered and every executor it launched for it.
app_id=$(sed -n "s/.*Registered app $APP_NAME with ID \(app-[0-9-]*\).*/\1/p" "$LOGS/master.log" | tail -n 1)
executors=$(grep -c "Launching executor ${app_id:-none}/" "$LOGS/master.log" || true)
log "dbt ran as ${app_id:-no application}; executors launched for it: $executors (logs: $LOGS)"
log "warehouse: $WAREHOUSE (tables as Parquet under <schema>.db/<table>)"
exit "$status"
