#!/usr/bin/env bash
# Boots this machine's own systemd as PID 1 in a container (systemd-nspawn)
# on a throwaway overlay of /, installs a quotesync .deb there whose binary is
# testdata/probe, and drives the unit through a start before it is
# configured, start, reload, a watchdog timeout, a panic, exit statuses 1
# and 2, and a missing credential file; then two sites of the template
# quotesync@.service side by side, reloaded together, and a third that
# waits for its token. Run by
# TestUnitUnderSystemd as root:
#
#   unshare --mount --fork bash boot.sh PACKAGE.deb SCRATCH_DIR NSPAWN CLIENT
#
# CLIENT is a real quotesync binary: as root, outside the sandbox, it runs
# `quotesync sync-now` against the probe's control socket.
#
# stdout: one "key: value" line per observation (the probe's own lines are
# "probe.<what>: <result>"); the container's console goes to stderr.
# The host's /run/mysqld is bound read-only into the container so the probe
# can reach the local MariaDB through its socket; the network is shared.
set -euo pipefail

deb=$1
base=$2
nspawn=$3
client=$4
[[ -f $deb && -d $base && -x $nspawn && -x $client ]] || { echo "usage: boot.sh PACKAGE.deb SCRATCH_DIR NSPAWN CLIENT" >&2; exit 2; }
mount --make-rprivate /
mount -t tmpfs -o mode=0755 quotesync-test "$base"
mkdir "$base/upper" "$base/work" "$base/root" "$base/results"
mount -t overlay overlay -o "lowerdir=/,upperdir=$base/upper,workdir=$base/work" "$base/root"
r=$base/root
[[ $(findmnt -no FSTYPE "$r") == overlay ]] || { echo "boot.sh: $r is not an overlay; stopping" >&2; exit 1; }
[[ -f $r/var/lib/dpkg/status && -x $r/usr/bin/dpkg ]] || { echo "boot.sh: the overlay of / has no dpkg database (/var or /usr on another file system?); this check needs them on /" >&2; exit 1; }
cp "$deb" "$r/root/quotesync.deb"
cp "$client" "$r/root/quotesync-client"

# Boot into a target of our own: basic.target plus the driver, nothing else
# (no database server, no getty) in the container.
sysd=$r/etc/systemd/system
cat >"$sysd/qs-test.target" <<'UNIT'
[Unit]
Description=quotesync unit test
Requires=basic.target qs-driver.service
After=basic.target
AllowIsolate=yes
UNIT
cat >"$sysd/qs-driver.service" <<'UNIT'
[Unit]
After=basic.target
[Service]
Type=oneshot
ExecStart=/bin/bash /root/driver.sh
UNIT
ln -sf qs-test.target "$sysd/default.target"

cat >"$r/root/driver.sh" <<'DRIVER'
exec >/results/out.txt 2>/results/driver.err
trap 'systemctl poweroff' EXIT
out() { printf '%s: %s\n' "$1" "$2"; }
show() { systemctl show -P "$1" quotesync; }
dropin() {
	mkdir -p /etc/systemd/system/quotesync.service.d
	printf '[Service]\nRestartSec=1s\n%s\n' "$1" >/etc/systemd/system/quotesync.service.d/test.conf
	systemctl daemon-reload
	systemctl reset-failed quotesync 2>/dev/null || true
}
# scenario NAME DROPIN SECONDS: start with the drop-in, wait, report.
scenario() {
	local since
	since=$(date '+%Y-%m-%d %H:%M:%S')
	dropin "$2"
	timeout 20 systemctl start quotesync
	[[ $1 == watchdog ]] && systemctl kill -s USR1 --kill-whom=main quotesync
	sleep "$3"
	out "$1.state" "$(show ActiveState)"
	out "$1.restarted" "$( (($(show NRestarts) > 0)) && echo yes || echo no)"
	out "$1.status" "$(show ExecMainStatus)"
	out "$1.abort" "$(journalctl -u quotesync --since "$since" -o cat | grep -q 'code=killed, status=6/ABRT' && echo yes || echo no)"
	systemctl stop quotesync
	sleep 1
}

dpkg -i /root/quotesync.deb >&2
out install.enabled "$(systemctl is-enabled quotesync)"
out install.active "$(systemctl is-active quotesync)"

# Started before it is configured: no token yet (systemd's condition), then
# the example's remote.base_url (the binary's): each time inactive, not
# failed, not restarted, and the status or the journal says what to do.
timeout 20 systemctl start quotesync || true
sleep 1
out notoken.state "$(show ActiveState)/$(show Result)"
out notoken.restarts "$(show NRestarts)"
out notoken.message "$(systemctl status quotesync 2>&1 | grep -qF 'unmet condition check (ConditionFileNotEmpty=/etc/quotesync/credentials/token)' && echo yes || echo no)"
install -m 0600 /dev/null /etc/quotesync/credentials/token
install -m 0600 /dev/null /etc/quotesync/credentials/db-password
printf 'token' >/etc/quotesync/credentials/token
printf 'password' >/etc/quotesync/credentials/db-password
timeout 20 systemctl start quotesync || true
sleep 1
out example.state "$(show ActiveState)/$(show Result)"
out example.restarts "$(show NRestarts)"
out example.message "$(journalctl -u quotesync -o cat | grep -q 'not configured yet' && echo yes || echo no)"
sed -i 's|https://api.insurer.example|https://insurer.test|' /etc/quotesync/config.yaml

# (the unit's TimeoutStartSec is 2min: a probe that cannot notify would
# stall the whole run that long)
timeout 20 systemctl start quotesync
out start.state "$(show ActiveState)/$(show SubState)"
out start.watchdog "$(show WatchdogUSec)"
# `quotesync sync-now` as root reaches the sandboxed service's socket.
out control.socket "$(stat -c '%a %U' /run/quotesync/control.sock 2>&1)"
rc=0
answer=$(/root/quotesync-client sync-now --config /etc/quotesync/config.yaml 2>&1) || rc=$?
out control.answer "${answer%%:*} exit $rc"
systemctl reload quotesync
sleep 1
journalctl -u quotesync -o cat | grep '^probe\.'
systemctl stop quotesync

scenario watchdog 'WatchdogSec=3s' 7
scenario panic 'Environment=PROBE_PANIC=1' 3
scenario exit1 'Environment=PROBE_EXIT=1' 3
scenario exit2 'Environment=PROBE_EXIT=2' 3

rm -rf /etc/systemd/system/quotesync.service.d
systemctl daemon-reload
systemctl reset-failed quotesync 2>/dev/null || true
rm /etc/quotesync/credentials/db-password
timeout 20 systemctl start quotesync 2>/dev/null
out nocredential.state "$(show ActiveState)"
systemctl stop quotesync

# Two sites of the template unit, each with its own file and token; a
# third without its token waits.
for s in north south; do
	install -d -m 0700 /etc/quotesync/sites/$s
	install -m 0600 /dev/null /etc/quotesync/sites/$s/token
	printf 'token-of-%s' $s >/etc/quotesync/sites/$s/token
	install -m 0640 -g quotesync /etc/quotesync/config.yaml /etc/quotesync/sites/$s.yaml
done
timeout 20 systemctl start quotesync@north quotesync@south
for s in north south; do
	site() { systemctl show -P "$1" quotesync@$s; }
	out site.$s.state "$(site ActiveState)/$(site SubState)"
	out site.$s.args "$(journalctl -u quotesync@$s -o cat | sed -n 's/^probe\.args: //p')"
	out site.$s.identifier "$(journalctl _SYSTEMD_UNIT=quotesync@$s.service -o verbose | sed -n 's/^ *SYSLOG_IDENTIFIER=//p' | sort -u | paste -sd,)"
	want=$(sha256sum /etc/quotesync/sites/$s/token | cut -c1-8)
	got=$(journalctl -u quotesync@$s -o cat | sed -n 's/^probe\.credential\.token-digest: //p')
	out site.$s.token "$([[ $got == "$want" ]] && echo own || echo "other ($got, want $want)")"
	out site.$s.runtime-directory "$(journalctl -u quotesync@$s -o cat | sed -n 's/^probe\.runtime-directory: //p')"
	out site.$s.control "$(stat -c '%a %U' /run/quotesync@$s/control.sock 2>&1)"
done
rc=0
answer=$(/root/quotesync-client sync-now --site north 2>&1) || rc=$?
out site.north.sync-now "${answer%%:*} exit $rc"
systemctl reload 'quotesync@*'
sleep 1
for s in north south; do
	out site.$s.reload "$(journalctl -u quotesync@$s -o cat | grep -c '^probe\.reload: ok')"
done
timeout 20 systemctl start quotesync@east || true
sleep 1
out site.east.state "$(systemctl show -P ActiveState quotesync@east)/$(systemctl show -P Result quotesync@east)"
out site.east.message "$(systemctl status quotesync@east 2>&1 | grep -qF 'unmet condition check (ConditionFileNotEmpty=/etc/quotesync/sites/east/token)' && echo yes || echo no)"
systemctl stop 'quotesync@*'
out site.stopped "$(systemctl list-units --no-legend --state=active 'quotesync@*' | wc -l)"
DRIVER

binds=(--bind="$base/results:/results")
[[ -d /run/mysqld ]] && binds+=(--bind-ro=/run/mysqld)
timeout 240 "$nspawn" --quiet -D "$r" --boot --register=no --keep-unit --link-journal=no \
	--console=pipe "${binds[@]}" </dev/null >&2 || echo "boot.sh: systemd-nspawn exited with $?" >&2
cat "$base/results/driver.err" >&2 || true
cat "$base/results/out.txt"
