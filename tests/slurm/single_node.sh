#!/usr/bin/env bash
# A single-node SLURM cluster on this machine (controller + one compute node on localhost), from
# Debian's slurm-wlm and munge, for the executor test (tests/workflow/test_slurm.py).
#   tests/slurm/single_node.sh start   install if needed, write the config, start munged/slurmctld/slurmd
#   tests/slurm/single_node.sh stop
# No slurmdbd: with AccountingStorageType=accounting_storage/none, sacct answers from slurmctld
# for jobs younger than MinJobAge, which is what the snakemake slurm executor polls; the
# job-completion log (jobcomp/filetxt) keeps a permanent record of every job for the test.
set -euo pipefail
STATE=${SLURM_TEST_STATE:-/var/lib/synthrisk-slurm}
CONF=/etc/slurm/slurm.conf

install() {
    command -v slurmctld >/dev/null && command -v munged >/dev/null && return
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
}

write_config() {
    mkdir -p "$STATE/ctld" "$STATE/d" /etc/slurm /var/log/slurm
    node=$(slurmd -C | head -1)
    # Leave 2 GiB to the system so that the memory a job asks for really exists.
    memory=$(( $(echo "$node" | sed -E 's/.*RealMemory=([0-9]+).*/\1/') - 2048 ))
    node=$(echo "$node" | sed -E "s/RealMemory=[0-9]+/RealMemory=$memory/")
    cat > "$CONF" <<CONF
ClusterName=synthrisk-test
SlurmctldHost=$(hostname)(127.0.0.1)
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/d
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/linux
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=/var/log/slurm/jobcomp.log
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
MinJobAge=600
MpiDefault=none
$node NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=main Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
    : > /etc/slurm/cgroup.conf
}

start() {
    install
    write_config
    stop_daemons
    mkdir -p /run/munge && chown munge:munge /run/munge 2>/dev/null || true
    [ -s /etc/munge/munge.key ] || mungekey --create --force
    # munged refuses root unless forced; this test cluster runs everything as root.
    pgrep -x munged >/dev/null || munged --force
    slurmctld -c -i
    slurmd -c
    for _ in $(seq 60); do
        if sinfo -h -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)'; then
            sinfo
            return 0
        fi
        sleep 1
    done
    echo "single-node SLURM did not come up; logs:" >&2
    tail -20 /var/log/slurm/slurmctld.log /var/log/slurm/slurmd.log >&2
    return 1
}

stop_daemons() {
    pkill -x slurmd 2>/dev/null || true
    pkill -x slurmctld 2>/dev/null || true
    sleep 1
}

case "${1:-start}" in
    start) start ;;
    stop) stop_daemons ;;
    *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
