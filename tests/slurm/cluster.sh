#!/usr/bin/env bash
# A single-node SLURM cluster for the tests, from Debian packages (munge, slurmctld, slurmd; no accounting).
#   tests/slurm/cluster.sh install   apt-get install the packages (root)
#   tests/slurm/cluster.sh start     start munged (unless running), slurmctld and slurmd; wait for an idle node
#   tests/slurm/cluster.sh stop      stop only the daemons this script started
# The configuration lives in $CLSD_SLURM_DIR (default /tmp/clsd-slurm): point clients at it with
#   export SLURM_CONF=$CLSD_SLURM_DIR/slurm.conf
set -euo pipefail
DIR="${CLSD_SLURM_DIR:-/tmp/clsd-slurm}"
CONF="$DIR/slurm.conf"

install() {
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq munge slurmctld slurmd slurm-client >/dev/null
}

write_conf() {
    local host cpus mem
    host="$(hostname -s)"
    cpus="$(nproc)"
    mem=$(( $(awk '/MemTotal/ {print int($2/1024)}' /proc/meminfo) - 1024 ))
    mkdir -p "$DIR/state" "$DIR/spool" "$DIR/log"
    cat >"$CONF" <<CONF
ClusterName=clsd
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
SlurmctldPort=6817
SlurmdPort=6818
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
MinJobAge=300
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=main Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
}

start() {
    if [ -f "$CONF" ] && SLURM_CONF="$CONF" sinfo -h -o '%T' 2>/dev/null | grep -qE '^(idle|mixed|allocated)$'; then
        echo "SLURM already running: SLURM_CONF=$CONF (left as it is)"
        return 0
    fi
    write_conf
    : >"$DIR/started"
    if ! (munge -n | unmunge) >/dev/null 2>&1; then
        mkdir -p /run/munge /var/log/munge /var/lib/munge
        [ -f /etc/munge/munge.key ] || { dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null; chmod 400 /etc/munge/munge.key; }
        chown -R munge:munge /run/munge /var/log/munge /var/lib/munge /etc/munge
        runuser -u munge -- /usr/sbin/munged
        echo munged >>"$DIR/started"
    fi
    # Job steps (srun inside sbatch) read the default path: link it when the machine has no SLURM config.
    if [ ! -e /etc/slurm/slurm.conf ]; then
        mkdir -p /etc/slurm
        ln -s "$CONF" /etc/slurm/slurm.conf
        echo conf-link >>"$DIR/started"
    fi
    /usr/sbin/slurmctld -f "$CONF" && echo slurmctld >>"$DIR/started"
    /usr/sbin/slurmd -f "$CONF" && echo slurmd >>"$DIR/started"
    export SLURM_CONF="$CONF"
    for _ in $(seq 1 60); do
        if sinfo -h -o '%T' 2>/dev/null | grep -qx idle; then
            echo "SLURM ready: SLURM_CONF=$CONF"
            return 0
        fi
        sleep 1
    done
    echo "SLURM node not idle after 60 s" >&2
    sinfo >&2 || true
    return 1
}

stop() {
    [ -f "$DIR/started" ] || return 0
    grep -qx slurmd "$DIR/started" && [ -f "$DIR/slurmd.pid" ] && kill "$(cat "$DIR/slurmd.pid")" 2>/dev/null || true
    grep -qx slurmctld "$DIR/started" && [ -f "$DIR/slurmctld.pid" ] && kill "$(cat "$DIR/slurmctld.pid")" 2>/dev/null || true
    grep -qx munged "$DIR/started" && [ -f /run/munge/munged.pid ] && kill "$(cat /run/munge/munged.pid)" 2>/dev/null || true
    grep -qx conf-link "$DIR/started" && rm -f /etc/slurm/slurm.conf || true
    rm -f "$DIR/started"
}

"${1:?usage: cluster.sh install|start|stop}"
