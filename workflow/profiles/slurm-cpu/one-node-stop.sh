#!/bin/bash
# Stop the cluster that one-node.sh DIR started: its daemons by their PIDs, then the
# /etc/slurm/slurm.conf link (only if it points to DIR's config) and /etc/slurm (only
# if one-node.sh created it and it is empty). Jobs still running are killed with slurmd.
D=${1:?usage: one-node-stop.sh DIR}
D=$(cd "$D" 2>/dev/null && pwd) || exit 0
for f in slurmd slurmctld; do
    if [ -s "$D/$f.pid" ]; then
        pid=$(cat "$D/$f.pid")
        kill "$pid" 2>/dev/null
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null
    fi
    rm -f "$D/$f.pid"
done
[ "$(readlink /etc/slurm/slurm.conf)" = "$D/etc/slurm.conf" ] && rm -f /etc/slurm/slurm.conf
[ -e "$D/created-etc-slurm" ] && rmdir /etc/slurm 2>/dev/null && rm -f "$D/created-etc-slurm"
true
