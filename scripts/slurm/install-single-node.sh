#!/usr/bin/env bash
# install-single-node.sh — install and start a single-node Slurm on this Debian 12 machine:
# munge, slurmctld and slurmd on localhost, one partition with this host's CPUs and memory,
# so that scripts/slurm/sweep.sbatch (and tests/cli/slurm.sh) can run. Idempotent: a Slurm
# that already answers is left as it is. Without systemd as PID 1 (containers) the daemons are
# started directly. Needs root (and the network, for apt-get) unless it is all there already.
# Exit 0 when `sinfo` shows the node idle; 1 with one line "not installable: <reason>" else.
set -u
say() { echo "install-single-node: $*"; }
die() { echo "install-single-node: not installable: $*" >&2; exit 1; }

node_ready() {
	command -v sinfo >/dev/null && [ -n "$(sinfo -h -N -t idle,mix,alloc -o %N 2>/dev/null)" ]
}
if node_ready; then
	say "Slurm is running: $(sinfo -h -N -o '%N %c CPUs %m MB %T' | head -1)"
	exit 0
fi
[ "$(id -u)" -eq 0 ] || die "needs root to install and start slurmctld, slurmd and munge"
command -v apt-get >/dev/null || die "no apt-get (a Debian machine is expected)"

pkgs=()
for p in munge slurm-wlm slurmctld slurmd slurm-client; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || pkgs+=("$p")
done
if [ ${#pkgs[@]} -gt 0 ]; then
	say "apt-get install ${pkgs[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -q --no-install-recommends "${pkgs[@]}" >/tmp/slurm-install.log 2>&1 ||
		{ apt-get update -q >>/tmp/slurm-install.log 2>&1 &&
		  apt-get install -y -q --no-install-recommends "${pkgs[@]}" \
			>>/tmp/slurm-install.log 2>&1; } ||
		die "apt-get install ${pkgs[*]} failed ($(tail -1 /tmp/slurm-install.log))"
fi

host=$(hostname -s)
cpus=$(nproc)
mem=$(awk '/MemTotal/ { printf "%d", $2 / 1024 * 0.9 }' /proc/meminfo)
conf=/etc/slurm/slurm.conf
mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm /run/munge
# Written only when absent or ours: a site's own slurm.conf is not replaced.
if [ ! -e "$conf" ] || grep -q '^# written by iommulab' "$conf"; then
	cat >"$conf" <<CONF
# written by iommulab scripts/slurm/install-single-node.sh: one node, this host
ClusterName=iommulab
SlurmctldHost=$host
SlurmUser=root
SlurmctldPort=6817
SlurmdPort=6818
AuthType=auth/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
# no cgroups: containers often cannot delegate them
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
# one CPU per task: array tasks run side by side
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=main Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
fi
# cgroup.conf is read by slurmd even without cgroup plugins in some builds: keep it harmless
[ -e /etc/slurm/cgroup.conf ] || echo "CgroupPlugin=autodetect" >/etc/slurm/cgroup.conf

if [ ! -s /etc/munge/munge.key ]; then
	mkdir -p /etc/munge
	dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none ||
		die "cannot create /etc/munge/munge.key"
fi
chown -R munge:munge /etc/munge /run/munge /var/lib/munge /var/log/munge 2>/dev/null
chmod 0700 /etc/munge
chmod 0400 /etc/munge/munge.key

if [ "$(cat /proc/1/comm 2>/dev/null)" = systemd ]; then
	systemctl restart munge slurmctld slurmd || die "systemctl could not start the daemons"
else
	pgrep -x munged >/dev/null || runuser -u munge -- /usr/sbin/munged ||
		die "munged did not start"
	pgrep -x slurmctld >/dev/null || /usr/sbin/slurmctld ||
		die "slurmctld did not start ($(tail -1 /var/log/slurm/slurmctld.log 2>/dev/null))"
	pgrep -x slurmd >/dev/null || /usr/sbin/slurmd ||
		die "slurmd did not start ($(tail -1 /var/log/slurm/slurmd.log 2>/dev/null))"
fi
for _ in $(seq 30); do
	node_ready && break
	scontrol update nodename="$host" state=resume >/dev/null 2>&1
	sleep 1
done
node_ready || die "the node did not come up: $(sinfo -h -N -o '%N %T %E' 2>&1 | head -1);" \
	"slurmd: $(tail -1 /var/log/slurm/slurmd.log 2>/dev/null)"
say "Slurm is running: $(sinfo -h -N -o '%N %c CPUs %m MB %T' | head -1)"
