#!/bin/bash
# Start a one-node SLURM cluster on this machine, to try the slurm-cpu profile before
# a site's cluster (and for tests/test_slurm.py). Debian/Ubuntu's slurm (tested with
# 22.05): slurmctld + slurmd as root, auth/none (no munge), no slurmdbd, no cgroups,
# no GPU gres -- a small site's setup. auth/none lets any local user submit jobs as
# root: for a trial on a machine of your own only.
#
#   sudo workflow/profiles/slurm-cpu/one-node.sh DIR     # DIR: config, state, logs, PIDs
#   sudo workflow/profiles/slurm-cpu/one-node.sh --no-install DIR   # never apt-get (tests/test_slurm.py)
#   snakemake --profile workflow/profiles/slurm-cpu all
#   sudo workflow/profiles/slurm-cpu/one-node-stop.sh DIR
#
# Installs slurmctld, slurmd and slurm-client with apt-get when they are missing,
# unless --no-install is given (then missing packages are exit status 2): the test
# suite passes it, a test never installs system packages (.ci/run installs them in CI).
# The config goes to /etc/slurm/slurm.conf (a link to DIR/etc/slurm.conf): the
# executor plugin's inner `srun` does not see SLURM_CONF. An /etc/slurm/slurm.conf
# that this script did not write is never replaced: it stops with exit status 3.
# Exit status: 0 started (the node is idle and ran a job); 2 cannot here (not root,
# no apt-get, apt-get failed, --no-install and not installed); 3 another SLURM config is in place; 1 start failed
# (see DIR/log/).
set -uo pipefail
INSTALL=1
if [ "${1:-}" = --no-install ]; then INSTALL=0; shift; fi
D=${1:?usage: one-node.sh [--no-install] DIR}
mkdir -p "$D" && D=$(cd "$D" && pwd)
say() { echo "one-node.sh: $*" >&2; }

[ "$(id -u)" = 0 ] || { say "needs root (it starts slurmctld and slurmd as root and writes /etc/slurm/slurm.conf)"; exit 2; }
if [ -e /etc/slurm/slurm.conf ] || [ -L /etc/slurm/slurm.conf ]; then
    if [ "$(readlink /etc/slurm/slurm.conf)" != "$D/etc/slurm.conf" ]; then
        say "/etc/slurm/slurm.conf exists and was not written by this script for $D; not replacing it (stop that cluster, or move the file)"
        exit 3
    fi
fi
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v sbatch >/dev/null; then
    [ "$INSTALL" = 1 ] || { say "slurmctld/slurmd/sbatch are not installed (--no-install: apt-get install slurmctld slurmd slurm-client, or .ci/run in CI)"; exit 2; }
    command -v apt-get >/dev/null || { say "slurmctld/slurmd/sbatch missing and no apt-get to install them"; exit 2; }
    say "installing slurmctld slurmd slurm-client with apt-get"
    if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurmctld slurmd slurm-client; } > "$D/apt.log" 2>&1; then
        say "apt-get failed (see $D/apt.log)"; exit 2
    fi
fi
if [ -s "$D/slurmctld.pid" ] && kill -0 "$(cat "$D/slurmctld.pid")" 2>/dev/null; then
    say "a cluster from $D is already running (stop it with one-node-stop.sh $D)"; exit 3
fi

HOST=$(hostname -s)
CPUS=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)  # the machine's CPUs (nproc follows OMP_NUM_THREADS, which the tests set to 1)
MEM=$(( $(awk '/MemTotal/ {print int($2/1024)}' /proc/meminfo) * 85 / 100 ))
rm -rf "$D/state" "$D/spool"
mkdir -p "$D"/{etc,state,spool,log}
cat > "$D/etc/slurm.conf" <<CONF
# written by synprep's workflow/profiles/slurm-cpu/one-node.sh for $D
ClusterName=synprep-trial
SlurmctldHost=$HOST
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/slurmctld.pidfile
SlurmdPidFile=$D/slurmd.pidfile
SlurmctldLogFile=$D/log/slurmctld.log
SlurmdLogFile=$D/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MinJobAge=300
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
NodeName=$HOST CPUs=$CPUS RealMemory=$MEM State=UNKNOWN
PartitionName=debug Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
CONF
if [ ! -d /etc/slurm ]; then mkdir /etc/slurm && touch "$D/created-etc-slurm"; fi
ln -sfn "$D/etc/slurm.conf" /etc/slurm/slurm.conf

setsid slurmctld -D > "$D/log/slurmctld.out" 2>&1 < /dev/null &
echo $! > "$D/slurmctld.pid"
setsid slurmd -D > "$D/log/slurmd.out" 2>&1 < /dev/null &
echo $! > "$D/slurmd.pid"
for _ in $(seq 100); do [ "$(sinfo -h -o %T 2>/dev/null)" = idle ] && break; sleep 0.2; done
if [ "$(sinfo -h -o %T 2>/dev/null)" != idle ] || ! timeout 30 srun -Q true; then
    say "the node did not come up (see $D/log/); stopping"
    "$(dirname "$0")/one-node-stop.sh" "$D"
    exit 1
fi
say "one node up: $HOST, $CPUS CPUs, $MEM MB, partition debug (stop: $(dirname "$0")/one-node-stop.sh $D)"
